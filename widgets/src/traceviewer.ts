/**
 * "CUDA graph timeline": a document widget for torch.profiler (Kineto) traces.
 *
 * The server extension reads the trace, so the browser never downloads it (a million-event
 * trace is hundreds of MB): the model factory below has no file format, which tells the
 * document context to fetch the file's metadata only. The server answers with the gap report
 * (the figures `graphlab gaps` prints) and a level-of-detail plotly figure of at most a few
 * thousand bars per lane; zooming asks for the bars of the new range. plotly.js comes from the
 * installed python plotly package through the server extension: no CDN, no kernel, no network.
 * The server words the report in the language the view asks for (JupyterLab's).
 */
import {
  ABCWidgetFactory,
  Base64ModelFactory,
  DocumentRegistry,
  DocumentWidget
} from '@jupyterlab/docregistry';
import { Contents } from '@jupyterlab/services';
import { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { apiURL, requestAPI } from './api';

export const FACTORY = 'CUDA graph timeline';
export const MODEL = 'graphlab-trace';

/** The server's answer for a trace: the report, its figures and the figure to draw. */
interface ITraceReport {
  path: string;
  report: string;
  figures: Record<string, unknown>;
  events: number;
  lod: boolean;
  figure: { data: unknown[]; layout: Record<string, unknown> };
}

/** A model that loads no content: the trace is read by the server, not the browser. */
export class TraceModelFactory extends Base64ModelFactory {
  get name(): string {
    return MODEL;
  }

  get fileFormat(): Contents.FileFormat {
    return null;
  }
}

/* eslint-disable @typescript-eslint/no-explicit-any */
let plotly: Promise<any> | null = null;

/**
 * plotly.js, loaded once per page from the server extension (which serves plotly's copy);
 * `failure` is the message of the error raised if it cannot be loaded.
 */
function loadPlotly(failure: string): Promise<any> {
  if (!plotly) {
    plotly = new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = apiURL('plotly.js');
      script.onload = () => resolve((window as any).Plotly);
      script.onerror = () => {
        plotly = null;
        reject(new Error(failure));
      };
      document.head.appendChild(script);
    });
  }
  return plotly;
}

/**
 * Load plotly.js ahead of the first trace, once the page has nothing else to do.
 *
 * Fetching the file takes a tenth of a second; evaluating it about a second on a two-core
 * laptop, which the first open of a trace would otherwise wait for. A failure here is left to
 * that open, which tries again and shows the error.
 */
export function preloadPlotly(): void {
  const load = () => void loadPlotly('').catch(() => undefined);
  if ('requestIdleCallback' in window) {
    window.requestIdleCallback(load);
  } else {
    setTimeout(load, 0);
  }
}

export class TraceView extends Widget {
  /**
   * @param _path - the trace, relative to the server's root.
   * @param _trans - the view's words.
   * @param _language - the course language the server writes the report in (`zh_CN`).
   */
  constructor(
    private readonly _path: string,
    private readonly _trans: TranslationBundle,
    private readonly _language: string
  ) {
    super();
    this.addClass('graphlab-Trace');
    this.node.dataset.graphlabPath = _path;
    this._status = append(this.node, 'div', 'graphlab-Trace-status');
    // Loading messages and errors are read out by screen readers as they change.
    this._status.setAttribute('aria-live', 'polite');
    this._status.textContent = _trans.__('Reading %1 …', _path);
    this._report = append(this.node, 'pre', 'graphlab-Trace-report');
    this._plot = append(this.node, 'div', 'graphlab-Trace-plot');
    void this._load();
  }

  /** The report as the server sent it (tests and the tour read it). */
  get report(): ITraceReport | null {
    return this._data;
  }

  protected onResize(): void {
    if (this._Plotly && this._data) {
      this._Plotly.Plots.resize(this._plot);
    }
  }

  private async _load(): Promise<void> {
    const started = performance.now();
    const trans = this._trans;
    try {
      const [data, Plotly] = await Promise.all([
        requestAPI<ITraceReport>(
          `trace?${new URLSearchParams({ path: this._path, lang: this._language })}`
        ),
        loadPlotly(trans.__('plotly.js could not be loaded from the graphlab server extension'))
      ]);
      this._data = data;
      this._Plotly = Plotly;
      this._report.textContent = data.report;
      await Plotly.newPlot(this._plot, data.figure.data, data.figure.layout, {
        displaylogo: false,
        responsive: true
      });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      this._summary =
        trans._n(
          '%2 event, opened in %3 s',
          '%2 events, opened in %3 s',
          data.events,
          data.events.toLocaleString(),
          seconds
        ) + (data.lod ? trans.__('; bars closer than a pixel are merged, zoom in for detail') : '');
      this._status.textContent = this._summary;
      if (data.lod) {
        (this._plot as any).on('plotly_relayout', (event: any) => void this._refine(event));
      }
      this.node.dataset.graphlabLoaded = 'true';
    } catch (reason) {
      this._status.textContent = (reason as Error).message;
      this._status.classList.add('graphlab-Trace-error');
      this._status.setAttribute('role', 'alert');
      this.node.dataset.graphlabLoaded = 'error';
    }
  }

  /** After a zoom, redraw with the bars of the visible range (the server merges less). */
  private async _refine(event: any): Promise<void> {
    const params: Record<string, string> = { path: this._path, lang: this._language };
    // A drag zoom reports the range as two keys, Plotly.relayout({'xaxis.range': [..]}) as one.
    const [x0, x1] = event['xaxis.range'] ?? [event['xaxis.range[0]'], event['xaxis.range[1]']];
    if (x0 !== undefined && x1 !== undefined) {
      params.x0 = String(x0);
      params.x1 = String(x1);
    } else if (!event['xaxis.autorange']) {
      return; // a change that is not a zoom (hover, legend, resize)
    }
    // Zooms can outrun the server: only the latest request may redraw, so an older answer
    // arriving late never replaces the bars of the range now on screen.
    const request = ++this._refinements;
    try {
      const data = await requestAPI<ITraceReport>(`trace?${new URLSearchParams(params)}`);
      if (request !== this._refinements || this.isDisposed) {
        return;
      }
      await this._Plotly.react(this._plot, data.figure.data, (this._plot as any).layout);
      this._status.textContent = this._summary;
      this._status.classList.remove('graphlab-Trace-error');
    } catch (reason) {
      if (request === this._refinements && !this.isDisposed) {
        this._status.textContent = this._trans.__(
          'Zoom not refined: %1',
          (reason as Error).message
        );
        this._status.classList.add('graphlab-Trace-error');
      }
    }
  }

  private _status: HTMLElement;
  private _report: HTMLElement;
  private _plot: HTMLElement;
  private _data: ITraceReport | null = null;
  private _Plotly: any = null;
  private _refinements = 0;
  private _summary = '';
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export class TraceViewFactory extends ABCWidgetFactory<DocumentWidget<TraceView>> {
  constructor(
    options: DocumentRegistry.IWidgetFactoryOptions<DocumentWidget<TraceView>>,
    private readonly _trans: TranslationBundle,
    private readonly _language: string
  ) {
    super(options);
  }

  protected createNewWidget(context: DocumentRegistry.Context): DocumentWidget<TraceView> {
    const content = new TraceView(context.path, this._trans, this._language);
    const widget = new DocumentWidget({ context, content });
    widget.title.caption = this._trans.__('%1 as a CUDA graph timeline', context.path);
    return widget;
  }
}

function append(parent: HTMLElement, tag: string, className: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  parent.appendChild(node);
  return node;
}

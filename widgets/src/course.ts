/**
 * The learner's view of the course, shared by the sidebar and the status-bar item.
 *
 * Progress is written by the kernel (each checker records its result) and served by the server
 * extension. The model refreshes when a notebook cell finishes executing, which is when a check
 * result can have been stored, so a PASSED shows up at once without a reload. A slow poll catches
 * what no cell execution announces: `graphlab progress --reset` in a terminal, another browser
 * tab, a lesson reset. Listening to the checker's iopub messages instead would tie the front end
 * to the kernel side's message format; the execution signal only says "something may have
 * changed", which is all the model needs.
 */
import { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';

import { IBackend, ILessons, requestAPI } from './api';

/** Wait after an execution before asking, so a burst of cells (Run All) costs one request. */
const DEBOUNCE_MS = 400;
/** The slow poll; skipped while the browser tab is hidden. */
const POLL_MS = 30000;

/**
 * The language the server should list the lessons in, from JupyterLab's language code: `zh-CN`
 * is the course's `zh_CN`, as the lessons' folder is named.
 */
export function courseLanguage(languageCode: string): string {
  return languageCode.replace('-', '_');
}

export class CourseModel {
  /**
   * @param language - the course language whose lessons to list (`en`, `zh_CN`); the server
   *   lists the English ones when the course folder has none in this language.
   * @param trans - the words of the model's own messages.
   */
  constructor(
    readonly language: string,
    private readonly _trans: TranslationBundle
  ) {}

  lessons: ILessons | null = null;
  backend: IBackend | null = null;
  /** The last failure to reach the server, shown instead of the list. */
  error = '';

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Fetch lessons and progress now. */
  async refresh(): Promise<void> {
    try {
      const query = new URLSearchParams({ lang: this.language });
      this.lessons = await requestAPI<ILessons>(`lessons?${query}`);
      this.error = '';
    } catch (reason) {
      this.error = (reason as Error).message;
    }
    this._changed.emit();
  }

  /** Fetch the backend once: it cannot change while the server runs. */
  async refreshBackend(): Promise<void> {
    try {
      this.backend = await requestAPI<IBackend>('backend');
    } catch (reason) {
      this.backend = {
        name: 'unknown',
        label: this._trans.__('backend unknown (%1)', (reason as Error).message),
        gpu: null,
        torch: null,
        cuda: null
      };
    }
    this._changed.emit();
  }

  /** Refresh soon; calls within DEBOUNCE_MS collapse into one request. */
  scheduleRefresh(): void {
    window.clearTimeout(this._timer);
    this._timer = window.setTimeout(() => void this.refresh(), DEBOUNCE_MS);
  }

  startPolling(): void {
    window.setInterval(() => {
      if (!document.hidden) {
        void this.refresh();
      }
    }, POLL_MS);
  }

  /** "2/3 exercises" style summary of the whole course. */
  get overall(): string {
    if (!this.lessons) {
      return '';
    }
    return `${this.lessons.done}/${this.lessons.total}`;
  }

  private _changed = new Signal<this, void>(this);
  private _timer = 0;
}

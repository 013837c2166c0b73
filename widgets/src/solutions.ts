/**
 * Hidden solutions with a "Show solution" / "Hide solution" bar on each solution cell (its words
 * in JupyterLab's language).
 *
 * The notebook convention (shared with the kernel's `%%solution` magic): a solution cell has
 * `graphlab` metadata as `cell_metadata.schema.json` defines it (graphlab/course/ in the
 * repository, the one definition that Python, this file and the tests read; the build copies
 * it here), its input collapsed (`jupyter.source_hidden`), the tag `solution`, and a first
 * line `%%solution ID`. The magic
 * skips the body unless the line says `--revealed` (or GRAPHLAB_RUN_SOLUTIONS=1 is set, as the
 * test configuration does), so Run All never runs an unrevealed solution. Revealing sets
 * `graphlab.revealed`, shows the input and adds `--revealed`; hiding undoes all three. The
 * notebook is saved at once, so a revealed solution stays revealed after a reload.
 *
 * Without this extension (Notebook 7 without it, Colab, Kaggle) the same cell is still
 * collapsed and still skipped by Run All: the metadata and the magic do the work, the bar is
 * only a convenience.
 */
import { Cell, ICellModel } from '@jupyterlab/cells';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { INotebookModel, Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { PanelLayout, Widget } from '@lumino/widgets';

import schema from './cell_metadata.schema.json';

export const SOLUTION_MAGIC = '%%solution';
const REVEALED_FLAG = '--revealed';
const BAR_CLASS = 'graphlab-SolutionBar';

/** The schema's version: a lesson written for another version is not this code's to edit. */
export const CELL_METADATA_VERSION: number = schema.version;
/** The role of a solution cell, as the schema names it. */
const SOLUTION_ROLE: string = schema.properties.role.enum[0];

interface IGraphlabMetadata {
  role?: string;
  exercise?: string;
  revealed?: boolean;
}

/** A cell's `graphlab` metadata, keeping only the keys the schema defines. */
export function graphlabMetadata(model: Pick<ICellModel, 'getMetadata'>): IGraphlabMetadata {
  const meta = model.getMetadata('graphlab') as Record<string, unknown> | undefined;
  const known: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    if (meta && key in meta) {
      known[key] = meta[key];
    }
  }
  return known as IGraphlabMetadata;
}

export function isSolution(model: ICellModel): boolean {
  return model.type === 'code' && graphlabMetadata(model).role === SOLUTION_ROLE;
}

export function isRevealed(model: ICellModel): boolean {
  return graphlabMetadata(model).revealed === true;
}

/**
 * The source with its `%%solution` line rewritten for the new state. A cell whose first line is
 * not the magic is left as it is: the learner's code is never edited beyond that one line.
 */
export function withMagicLine(source: string, exercise: string, reveal: boolean): string {
  const end = source.indexOf('\n');
  const first = end < 0 ? source : source.slice(0, end);
  if (first.split(/\s+/)[0] !== SOLUTION_MAGIC) {
    return source;
  }
  const line = `${SOLUTION_MAGIC} ${exercise}` + (reveal ? ` ${REVEALED_FLAG}` : '');
  return line + (end < 0 ? '' : source.slice(end));
}

/** Reveal or hide one solution cell (metadata, collapsed input and the magic's flag). */
export function setRevealed(cell: Cell, reveal: boolean): void {
  const model = cell.model;
  const meta = { ...graphlabMetadata(model) };
  const exercise = meta.exercise ?? '';
  if (reveal) {
    meta.revealed = true;
  } else {
    delete meta.revealed;
  }
  model.setMetadata('graphlab', meta);
  const source = model.sharedModel.getSource();
  const rewritten = withMagicLine(source, exercise, reveal);
  if (rewritten !== source) {
    model.sharedModel.setSource(rewritten);
  }
  // The setter also writes jupyter.source_hidden into the cell's metadata.
  cell.inputHidden = !reveal;
}

/** Reveal or hide, then save so the choice survives a reload. */
export async function toggleSolution(
  panel: NotebookPanel,
  cell: Cell,
  reveal: boolean
): Promise<void> {
  setRevealed(cell, reveal);
  await panel.context.save();
}

/** The first solution cell at or after the active cell that is still hidden, if any. */
export function nextHiddenSolution(notebook: Notebook): Cell | null {
  const cells = notebook.widgets;
  for (let i = Math.max(0, notebook.activeCellIndex); i < cells.length; i++) {
    if (isSolution(cells[i].model) && !isRevealed(cells[i].model)) {
      return cells[i];
    }
  }
  return null;
}

/** The bar above a solution cell: what it is, and the button that shows or hides it. */
class SolutionBar extends Widget {
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _cell: Cell,
    private readonly _trans: TranslationBundle
  ) {
    super();
    this.addClass(BAR_CLASS);
    this._label = document.createElement('span');
    this._label.className = 'graphlab-SolutionBar-label';
    this._button = document.createElement('button');
    this._button.className = 'jp-Button jp-mod-styled jp-mod-accept graphlab-SolutionBar-button';
    this._button.onclick = () =>
      void toggleSolution(this._panel, this._cell, !isRevealed(this._cell.model));
    this.node.append(this._label, this._button);
    _cell.model.metadataChanged.connect(this.render, this);
    this.render();
  }

  render(): void {
    const model = this._cell.model;
    const exercise = graphlabMetadata(model).exercise ?? '';
    const revealed = isRevealed(model);
    const trans = this._trans;
    this._label.textContent = revealed
      ? trans.__('Solution of exercise %1', exercise)
      : trans.__('Solution of exercise %1 (hidden; Run All skips it)', exercise);
    this._button.textContent = revealed ? trans.__('Hide solution') : trans.__('Show solution');
  }

  dispose(): void {
    this._cell.model?.metadataChanged.disconnect(this.render, this);
    super.dispose();
  }

  private _label: HTMLSpanElement;
  private _button: HTMLButtonElement;
}

/** Puts a SolutionBar on every solution cell of every notebook, including cells added later. */
export class SolutionBars implements DocumentRegistry.IWidgetExtension<
  NotebookPanel,
  INotebookModel
> {
  constructor(private readonly _trans: TranslationBundle) {}

  createNew(panel: NotebookPanel): IDisposable {
    const decorate = () => {
      for (const cell of panel.content.widgets) {
        const layout = cell.layout as PanelLayout;
        const has = layout.widgets.some(w => w.hasClass(BAR_CLASS));
        if (isSolution(cell.model) && !has) {
          layout.insertWidget(0, new SolutionBar(panel, cell, this._trans));
        }
      }
    };
    void panel.context.ready.then(() => {
      decorate();
      panel.content.model?.cells.changed.connect(decorate);
    });
    return new DisposableDelegate(() => panel.content.model?.cells.changed.disconnect(decorate));
  }
}

/**
 * Opening a lesson must not mark it modified.
 *
 * When a notebook's kernel starts, JupyterLab (and Notebook 7) copies the kernel's
 * `language_info` and `kernelspec` into the notebook's metadata. The lessons are stored without
 * `language_info.version` (a stored lesson does not depend on the Python it ran on), so the
 * kernel's "version": "3.x.y" is a change, the document turns dirty, its tab shows ● and closing
 * it asks "Save changes?" although the learner touched nothing.
 *
 * What a kernel reports about itself is not an edit: this widget extension keeps a document that
 * was clean before such an update clean after it. The new metadata stays in the model and is
 * written with the learner's next save. Any other change (a cell edited, a solution revealed)
 * marks the document modified as before.
 */
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';

/** The notebook metadata keys that JupyterLab writes from the kernel, not from the learner. */
export const KERNEL_KEYS: ReadonlySet<string> = new Set(['language_info', 'kernelspec']);

/** The part of a notebook model this extension uses (a fake in the unit tests). */
export interface ICleanableModel {
  dirty: boolean;
  metadataChanged: {
    connect(slot: (sender: unknown, change: { key: string }) => void): unknown;
    disconnect(slot: (sender: unknown, change: { key: string }) => void): unknown;
  };
  stateChanged: {
    connect(slot: (sender: unknown, change: { name: string; newValue: unknown }) => void): unknown;
    disconnect(
      slot: (sender: unknown, change: { name: string; newValue: unknown }) => void
    ): unknown;
  };
}

/**
 * Keep `model` clean across kernel-reported metadata updates; the returned function stops it.
 *
 * The notebook model announces the metadata change first and sets `dirty` right after, so the
 * first handler notes that a clean document received kernel metadata and the second clears the
 * dirty flag that this update, and only this update, raised.
 */
export function keepCleanOnKernelMetadata(model: ICleanableModel): () => void {
  let absorb = false;
  const onMetadata = (_: unknown, change: { key: string }) => {
    absorb = KERNEL_KEYS.has(change.key) && !model.dirty;
  };
  const onState = (_: unknown, change: { name: string; newValue: unknown }) => {
    if (change.name !== 'dirty' || change.newValue !== true) {
      return;
    }
    if (absorb) {
      absorb = false;
      model.dirty = false;
    }
  };
  model.metadataChanged.connect(onMetadata);
  model.stateChanged.connect(onState);
  return () => {
    model.metadataChanged.disconnect(onMetadata);
    model.stateChanged.disconnect(onState);
  };
}

/** The widget extension: every notebook panel, from the moment its model exists. */
export class PristineOnOpen implements DocumentRegistry.IWidgetExtension<
  NotebookPanel,
  INotebookModel
> {
  createNew(panel: NotebookPanel): IDisposable {
    const stop = keepCleanOnKernelMetadata(panel.context.model);
    let disposed = false;
    return {
      get isDisposed() {
        return disposed;
      },
      dispose() {
        if (!disposed) {
          disposed = true;
          stop();
        }
      }
    };
  }
}

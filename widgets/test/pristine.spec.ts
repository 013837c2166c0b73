import { Signal } from '@lumino/signaling';

import { ICleanableModel, keepCleanOnKernelMetadata } from '../src/pristine';

/** A notebook model as far as dirtiness goes: metadata updates raise `dirty` after announcing
 * the key, in the order JupyterLab's NotebookModel does. */
class FakeModel implements ICleanableModel {
  metadataChanged = new Signal<this, { key: string }>(this);
  stateChanged = new Signal<this, { name: string; newValue: unknown }>(this);
  get dirty(): boolean {
    return this._dirty;
  }
  set dirty(value: boolean) {
    if (value !== this._dirty) {
      this._dirty = value;
      this.stateChanged.emit({ name: 'dirty', newValue: value });
    }
  }
  setMetadata(key: string): void {
    this.metadataChanged.emit({ key });
    this.dirty = true;
  }
  editCell(): void {
    this.dirty = true;
  }
  private _dirty = false;
}

describe('keepCleanOnKernelMetadata', () => {
  it('keeps a just-opened lesson clean when the kernel reports its language', () => {
    const model = new FakeModel();
    keepCleanOnKernelMetadata(model);
    model.setMetadata('language_info');
    model.setMetadata('kernelspec');
    expect(model.dirty).toBe(false);
  });

  it('lets an edit, and a metadata change of the learner, mark the lesson modified', () => {
    const model = new FakeModel();
    keepCleanOnKernelMetadata(model);
    model.setMetadata('graphlab');
    expect(model.dirty).toBe(true);
    const other = new FakeModel();
    keepCleanOnKernelMetadata(other);
    other.editCell();
    expect(other.dirty).toBe(true);
  });

  it('leaves a modified lesson modified when the kernel reports afterwards', () => {
    const model = new FakeModel();
    keepCleanOnKernelMetadata(model);
    model.editCell();
    model.setMetadata('language_info');
    expect(model.dirty).toBe(true);
  });

  it('stops when asked', () => {
    const model = new FakeModel();
    keepCleanOnKernelMetadata(model)();
    model.setMetadata('language_info');
    expect(model.dirty).toBe(true);
  });
});

// jsdom has no DragEvent, which @lumino/dragdrop (under @lumino/widgets) extends as it loads.
Object.assign(globalThis, { DragEvent: class DragEvent extends MouseEvent {} });

/**
 * The left sidebar "CUDA Graphs course": the live backend, then every lesson with its progress.
 * Plain DOM rebuilt on each change: a list of fifteen lessons costs nothing to redraw, and it
 * keeps the widget free of a rendering framework. Its words come from the `cuda-graphlab`
 * translation domain; lesson titles come translated from the server, with the lessons of the
 * language JupyterLab is in.
 */
import { TranslationBundle } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { IBackend } from './api';
import { CourseModel } from './course';

export const SIDEBAR_ID = 'graphlab-course-sidebar';

/** A small graph (three nodes, two edges) as the sidebar's tab icon. */
export const courseIcon = new LabIcon({
  name: 'cuda-graphlab:course',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
    '<circle cx="5" cy="6" r="3"/><circle cx="19" cy="6" r="3"/><circle cx="12" cy="19" r="3"/>' +
    '<path d="M7 7.5l4 9 .9-.4-4-9zM17 7.5l-4 9-.9-.4 4-9z"/></g></svg>'
});

export class CourseSidebar extends Widget {
  constructor(
    private readonly _model: CourseModel,
    private readonly _open: (path: string) => void,
    private readonly _trans: TranslationBundle
  ) {
    super();
    this.id = SIDEBAR_ID;
    this.addClass('graphlab-Sidebar');
    this.title.icon = courseIcon;
    this.title.caption = _trans.__('CUDA Graphs course');
    _model.changed.connect(this.render, this);
    this.render();
  }

  render(): void {
    const { lessons, backend, error } = this._model;
    const trans = this._trans;
    const node = this.node;
    node.replaceChildren();
    node.appendChild(element('h2', 'graphlab-Sidebar-title', trans.__('CUDA Graphs course')));
    node.appendChild(
      element(
        'div',
        'graphlab-Sidebar-backend',
        backend ? backendLabel(backend, trans) : trans.__('finding the backend…')
      )
    );
    if (error) {
      const alert = element('div', 'graphlab-Sidebar-error', error);
      alert.setAttribute('role', 'alert');
      node.appendChild(alert);
      return;
    }
    if (!lessons) {
      return;
    }
    if (lessons.lessons.length === 0) {
      node.appendChild(
        element(
          'p',
          'graphlab-Sidebar-empty',
          trans.__('No lessons in this folder. Start the course with `graphlab lab`.')
        )
      );
      return;
    }
    const list = element('ol', 'graphlab-Sidebar-lessons');
    for (const lesson of lessons.lessons) {
      const item = element('li', 'graphlab-Sidebar-lesson');
      const done = lesson.passed.length;
      const total = lesson.exercises.length;
      const revealed = lesson.revealed.length;
      if (total > 0 && done === total) {
        item.classList.add('graphlab-mod-done');
      }
      const button = element('button', 'graphlab-Sidebar-open', '');
      button.appendChild(element('span', 'graphlab-Sidebar-number', lesson.number));
      button.appendChild(element('span', 'graphlab-Sidebar-name', lesson.title));
      button.title = trans.__('Open %1', lesson.path);
      button.onclick = () => this._open(lesson.path);
      item.appendChild(button);
      const count = element('span', 'graphlab-Sidebar-progress', total ? `${done}/${total}` : '–');
      if (revealed) {
        count.appendChild(
          element('span', 'graphlab-Sidebar-revealed', ' ' + trans.__('(%1 revealed)', revealed))
        );
        count.title = trans.__(
          'Passed after revealing the solution: %1. To earn it, hide the solution, restart ' +
            'the kernel and pass the check with your own answer.',
          lesson.revealed.join(', ')
        );
      }
      item.appendChild(count);
      list.appendChild(item);
    }
    node.appendChild(list);
    const revealed = lessons.lessons.reduce((n, l) => n + l.revealed.length, 0);
    node.appendChild(
      element(
        'div',
        'graphlab-Sidebar-overall',
        trans.__('Exercises passed: %1', this._model.overall) +
          (revealed ? trans.__(', %1 of them after revealing the solution', revealed) : '')
      )
    );
    node.appendChild(
      element(
        'div',
        'graphlab-Sidebar-scope',
        trans.__(
          'Progress belongs to your user account: every workspace and course folder you ' +
            'open shows the same results.'
        )
      )
    );
  }
}

/**
 * The sidebar's line about the backend: the GPU (or the CPU emulator), torch and CUDA versions,
 * as the server's `label` says them, in the sidebar's language. A backend that could not be found
 * keeps the server's label: it quotes the error.
 */
export function backendLabel(backend: IBackend, trans: TranslationBundle): string {
  const torch = backend.torch ? `torch ${backend.torch}` : '';
  const parts =
    backend.name === 'cuda'
      ? [backend.gpu ?? trans.__('CUDA GPU'), torch, `CUDA ${backend.cuda}`]
      : backend.name === 'emulator'
        ? [trans.__('CPU emulator'), torch]
        : [backend.label];
  return parts.filter(Boolean).join(' · ');
}

/** The status-bar item: backend and overall progress, in one short line. */
export class CourseStatus extends Widget {
  constructor(
    private readonly _model: CourseModel,
    private readonly _trans: TranslationBundle
  ) {
    super();
    this.addClass('graphlab-Status');
    this.node.title = _trans.__('CUDA Graphs course: backend and exercises passed');
    _model.changed.connect(this.render, this);
    this.render();
  }

  render(): void {
    const { backend } = this._model;
    const trans = this._trans;
    const short = !backend
      ? trans.__('backend…')
      : backend.name === 'cuda'
        ? (backend.gpu ?? 'CUDA')
        : backend.name === 'emulator'
          ? trans.__('CPU emulator')
          : trans.__('backend unknown');
    const progress = this._model.overall;
    this.node.textContent = progress ? trans.__('%1 · course %2', short, progress) : short;
  }
}

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text = ''
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

/**
 * graphlab's JupyterLab extension: three plugins.
 *
 * - course: the "CUDA Graphs course" sidebar, the status-bar item, the course commands and the
 *   first-run tour;
 * - solutions: the Show/Hide solution bar on solution cells and the "Show solution" command;
 * - trace-viewer: "Open With → CUDA graph timeline" for profiler traces.
 *
 * Nothing requires JupyterLab's own shell: the same plugins load in Notebook 7 (which has no
 * status bar, hence optional).
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  InputDialog,
  Notification,
  showDialog
} from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';

import { postAPI } from './api';
import { CourseModel } from './course';
import { PristineOnOpen } from './pristine';
import { CourseSidebar, CourseStatus, SIDEBAR_ID, courseIcon } from './sidebar';
import { SolutionBars, nextHiddenSolution, toggleSolution } from './solutions';
import { addTour, launchTour } from './tour';
import { FACTORY, MODEL, TraceModelFactory, TraceViewFactory, preloadPlotly } from './traceviewer';

const CATEGORY = 'CUDA Graphs course';

namespace CommandIDs {
  export const openCourse = 'graphlab:open-course';
  export const showSolution = 'graphlab:show-solution';
  export const resetLesson = 'graphlab:reset-lesson';
  export const resetProgress = 'graphlab:reset-progress';
  export const openTrace = 'graphlab:open-trace';
  export const tour = 'graphlab:tour';
}

function message(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

const course: JupyterFrontEndPlugin<void> = {
  id: 'cuda-graphlab:course',
  description: 'The CUDA Graphs course sidebar, status-bar item, commands and tour.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, IStatusBar, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    statusBar: IStatusBar | null,
    restorer: ILayoutRestorer | null
  ) => {
    const { commands, shell } = app;
    const model = new CourseModel();
    const open = (path: string) => commands.execute('docmanager:open', { path });
    const sidebar = new CourseSidebar(model, path => void open(path));
    shell.add(sidebar, 'left', { rank: 150 });
    restorer?.add(sidebar, SIDEBAR_ID);
    statusBar?.registerStatusItem('cuda-graphlab:status', {
      item: new CourseStatus(model),
      align: 'left',
      rank: 100
    });
    // A finished cell may have stored a check result: ask the server (debounced).
    NotebookActions.executed.connect(() => model.scheduleRefresh());
    void model.refresh();
    void model.refreshBackend();
    model.startPolling();

    commands.addCommand(CommandIDs.openCourse, {
      label: 'Open course',
      caption: 'Show the course sidebar and open the first lesson not yet passed',
      icon: courseIcon,
      execute: async () => {
        shell.activateById(SIDEBAR_ID);
        await model.refresh();
        const lessons = model.lessons?.lessons ?? [];
        const next = lessons.find(l => l.passed.length < l.exercises.length) ?? lessons[0];
        if (next) {
          await open(next.path);
        }
      }
    });

    commands.addCommand(CommandIDs.resetLesson, {
      label: 'Reset lesson',
      caption: 'Restore the open lesson as shipped; your copy is kept as a backup',
      isEnabled: () => tracker.currentWidget !== null,
      execute: async () => {
        const panel = tracker.currentWidget;
        const lesson = model.lessons?.lessons.find(l => l.path === panel?.context.path);
        if (!panel || !lesson) {
          Notification.warning('Reset lesson works on an open lesson notebook: open one first.');
          return;
        }
        const answer = await showDialog({
          title: `Reset lesson ${lesson.number}?`,
          body: 'The lesson as shipped replaces your copy. Your copy is kept as a backup file.',
          buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Reset' })]
        });
        if (!answer.button.accept) {
          return;
        }
        try {
          await panel.context.save(); // so the backup holds the latest edits
          const { backup } = await postAPI<{ backup: string | null }>('lessons/reset', {
            path: lesson.path
          });
          await panel.context.revert();
          const kept = backup ? ` Your copy is kept as ${backup}.` : '';
          Notification.success(`Lesson ${lesson.number} restored as shipped.${kept}`, {
            autoClose: 8000
          });
        } catch (reason) {
          Notification.error(message(reason));
        }
      }
    });

    commands.addCommand(CommandIDs.resetProgress, {
      label: 'Reset progress',
      caption: 'Forget every stored check result of the course',
      execute: async () => {
        const answer = await showDialog({
          title: 'Reset course progress?',
          body: 'Every stored check result is forgotten. Notebooks are not changed.',
          buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Reset' })]
        });
        if (!answer.button.accept) {
          return;
        }
        try {
          await postAPI('progress/reset');
        } catch (reason) {
          Notification.error(message(reason));
        }
        await model.refresh();
      }
    });

    commands.addCommand(CommandIDs.tour, {
      label: 'Course tour',
      caption: 'Show the tour of the course sidebar, an exercise and a widget',
      isEnabled: () => commands.hasCommand('jupyterlab-tour:launch'),
      execute: () => {
        shell.activateById(SIDEBAR_ID);
        return launchTour(commands, tracker, true);
      }
    });

    for (const command of Object.values(CommandIDs)) {
      if (command !== CommandIDs.showSolution && command !== CommandIDs.openTrace) {
        palette?.addItem({ command, category: CATEGORY });
      }
    }

    // The first-run tour: once the course folder has lessons, for someone who has not seen it.
    // It is a tour of a lesson, so it is offered once one is open (a lesson opened from the URL
    // opens just after the app is restored), with that lesson's steps.
    void app.restored.then(async () => {
      await model.refresh();
      if ((model.lessons?.lessons.length ?? 0) === 0 || !(await addTour(commands))) {
        return;
      }
      const offer = () => {
        shell.activateById(SIDEBAR_ID);
        void launchTour(commands, tracker, false);
      };
      if (tracker.currentWidget) {
        offer();
        return;
      }
      const once = () => {
        if (tracker.currentWidget) {
          tracker.currentChanged.disconnect(once);
          offer();
        }
      };
      tracker.currentChanged.connect(once);
    });
  }
};

const solutions: JupyterFrontEndPlugin<void> = {
  id: 'cuda-graphlab:solutions',
  description: 'Show/Hide solution on the solution cells of the course notebooks.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker, palette: ICommandPalette | null) => {
    app.docRegistry.addWidgetExtension('Notebook', new SolutionBars());
    app.docRegistry.addWidgetExtension('Notebook', new PristineOnOpen());
    app.commands.addCommand(CommandIDs.showSolution, {
      label: 'Show solution',
      caption: 'Reveal the next hidden solution at or after the active cell',
      isEnabled: () => tracker.currentWidget !== null,
      execute: async () => {
        const panel = tracker.currentWidget;
        const cell = panel && nextHiddenSolution(panel.content);
        if (!panel || !cell) {
          Notification.info('No hidden solution at or after the active cell.');
          return;
        }
        await toggleSolution(panel, cell, true);
        await panel.content.scrollToItem(panel.content.widgets.indexOf(cell));
      }
    });
    palette?.addItem({ command: CommandIDs.showSolution, category: CATEGORY });
  }
};

const traceViewer: JupyterFrontEndPlugin<void> = {
  id: 'cuda-graphlab:trace-viewer',
  description: 'Open torch.profiler traces as a CUDA graph timeline with the gap report.',
  autoStart: true,
  optional: [ICommandPalette, IFileBrowserFactory],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    browsers: IFileBrowserFactory | null
  ) => {
    const registry = app.docRegistry;
    // .json is known to JupyterLab already; these two make .json.gz openable at all and give
    // profiler traces (.pt.trace.json) the timeline as their default view.
    registry.addFileType({
      name: 'graphlab-json-gz',
      displayName: 'Compressed trace',
      extensions: ['.json.gz'],
      mimeTypes: ['application/gzip'],
      contentType: 'file',
      fileFormat: 'base64'
    });
    registry.addFileType({
      name: 'graphlab-pt-trace',
      displayName: 'PyTorch profiler trace',
      extensions: ['.pt.trace.json'],
      mimeTypes: ['application/json'],
      contentType: 'file',
      fileFormat: 'text'
    });
    registry.addModelFactory(new TraceModelFactory());
    registry.addWidgetFactory(
      new TraceViewFactory({
        name: FACTORY,
        label: FACTORY,
        modelName: MODEL,
        fileTypes: ['json', 'graphlab-json-gz', 'graphlab-pt-trace'],
        defaultFor: ['graphlab-json-gz', 'graphlab-pt-trace'],
        readOnly: true
      })
    );

    app.commands.addCommand(CommandIDs.openTrace, {
      label: 'Open trace as timeline',
      caption: 'Open the selected profiler trace (.json, .json.gz) as a CUDA graph timeline',
      execute: async () => {
        const browser = browsers?.tracker.currentWidget;
        let path = browser ? Array.from(browser.selectedItems())[0]?.path : undefined;
        if (!path) {
          const result = await InputDialog.getText({
            title: 'Open trace as timeline',
            label: 'Trace file, relative to the Jupyter root folder',
            placeholder: 'trace.json'
          });
          path = result.button.accept ? (result.value ?? undefined) : undefined;
        }
        if (path) {
          return app.commands.execute('docmanager:open', { path, factory: FACTORY });
        }
      }
    });
    palette?.addItem({ command: CommandIDs.openTrace, category: CATEGORY });
    // After the layout is restored, so that it never delays the page itself.
    void app.restored.then(preloadPlotly);
  }
};

export default [course, solutions, traceViewer];

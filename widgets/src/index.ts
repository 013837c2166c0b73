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
 *
 * Every word the learner reads comes from JupyterLab's translator, domain `cuda-graphlab`: the
 * Python package ships its catalogs (graphlab/server/locale/), which JupyterLab's server finds
 * through the package's `jupyterlab.locale` entry point. Identifiers, units and the names of
 * files and commands stay as they are.
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
import { ITranslator, TranslationBundle, nullTranslator } from '@jupyterlab/translation';

import { postAPI } from './api';
import { CourseModel, courseLanguage } from './course';
import { PristineOnOpen } from './pristine';
import { CourseSidebar, CourseStatus, SIDEBAR_ID, courseIcon } from './sidebar';
import { SolutionBars, nextHiddenSolution, toggleSolution } from './solutions';
import { addTour, launchTour } from './tour';
import { FACTORY, MODEL, TraceModelFactory, TraceViewFactory, preloadPlotly } from './traceviewer';

/** The translation domain of the extension's words. */
const DOMAIN = 'cuda-graphlab';

/** The extension's words in JupyterLab's language (English without a translator). */
function words(translator: ITranslator | null): TranslationBundle {
  return (translator ?? nullTranslator).load(DOMAIN);
}

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
  optional: [ICommandPalette, IStatusBar, ILayoutRestorer, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    statusBar: IStatusBar | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ) => {
    const { commands, shell } = app;
    const trans = words(translator);
    const category = trans.__('CUDA Graphs course');
    const language = courseLanguage((translator ?? nullTranslator).languageCode);
    const model = new CourseModel(language, trans);
    const open = (path: string) => commands.execute('docmanager:open', { path });
    const sidebar = new CourseSidebar(model, path => void open(path), trans);
    shell.add(sidebar, 'left', { rank: 150 });
    restorer?.add(sidebar, SIDEBAR_ID);
    statusBar?.registerStatusItem('cuda-graphlab:status', {
      item: new CourseStatus(model, trans),
      align: 'left',
      rank: 100
    });
    // A finished cell may have stored a check result: ask the server (debounced).
    NotebookActions.executed.connect(() => model.scheduleRefresh());
    void model.refresh();
    void model.refreshBackend();
    model.startPolling();

    commands.addCommand(CommandIDs.openCourse, {
      label: trans.__('Open course'),
      caption: trans.__('Show the course sidebar and open the first lesson not yet passed'),
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
      label: trans.__('Reset lesson'),
      caption: trans.__('Restore the open lesson as shipped; your copy is kept as a backup'),
      isEnabled: () => tracker.currentWidget !== null,
      execute: async () => {
        const panel = tracker.currentWidget;
        const lesson = model.lessons?.lessons.find(l => l.path === panel?.context.path);
        if (!panel || !lesson) {
          Notification.warning(
            trans.__('Reset lesson works on an open lesson notebook: open one first.')
          );
          return;
        }
        const answer = await showDialog({
          title: trans.__('Reset lesson %1?', lesson.number),
          body: trans.__(
            'The lesson as shipped replaces your copy. Your copy is kept as a backup file.'
          ),
          buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: trans.__('Reset') })]
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
          const kept = backup ? trans.__(' Your copy is kept as %1.', backup) : '';
          Notification.success(trans.__('Lesson %1 restored as shipped.', lesson.number) + kept, {
            autoClose: 8000
          });
        } catch (reason) {
          Notification.error(message(reason));
        }
      }
    });

    commands.addCommand(CommandIDs.resetProgress, {
      label: trans.__('Reset progress'),
      caption: trans.__('Forget every stored check result of the course'),
      execute: async () => {
        const answer = await showDialog({
          title: trans.__('Reset course progress?'),
          body: trans.__('Every stored check result is forgotten. Notebooks are not changed.'),
          buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: trans.__('Reset') })]
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
      label: trans.__('Course tour'),
      caption: trans.__('Show the tour of the course sidebar, an exercise and a widget'),
      isEnabled: () => commands.hasCommand('jupyterlab-tour:launch'),
      execute: () => {
        shell.activateById(SIDEBAR_ID);
        return launchTour(commands, tracker, true, trans);
      }
    });

    for (const command of Object.values(CommandIDs)) {
      if (command !== CommandIDs.showSolution && command !== CommandIDs.openTrace) {
        palette?.addItem({ command, category });
      }
    }

    // The first-run tour: once the course folder has lessons, for someone who has not seen it.
    // It is a tour of a lesson, so it is offered once one is open (a lesson opened from the URL
    // opens just after the app is restored), with that lesson's steps.
    void app.restored.then(async () => {
      await model.refresh();
      if ((model.lessons?.lessons.length ?? 0) === 0 || !(await addTour(commands, trans))) {
        return;
      }
      const offer = () => {
        shell.activateById(SIDEBAR_ID);
        void launchTour(commands, tracker, false, trans);
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
  optional: [ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ) => {
    const trans = words(translator);
    app.docRegistry.addWidgetExtension('Notebook', new SolutionBars(trans));
    app.docRegistry.addWidgetExtension('Notebook', new PristineOnOpen());
    app.commands.addCommand(CommandIDs.showSolution, {
      label: trans.__('Show solution'),
      caption: trans.__('Reveal the next hidden solution at or after the active cell'),
      isEnabled: () => tracker.currentWidget !== null,
      execute: async () => {
        const panel = tracker.currentWidget;
        const cell = panel && nextHiddenSolution(panel.content);
        if (!panel || !cell) {
          Notification.info(trans.__('No hidden solution at or after the active cell.'));
          return;
        }
        await toggleSolution(panel, cell, true);
        await panel.content.scrollToItem(panel.content.widgets.indexOf(cell));
      }
    });
    palette?.addItem({
      command: CommandIDs.showSolution,
      category: trans.__('CUDA Graphs course')
    });
  }
};

const traceViewer: JupyterFrontEndPlugin<void> = {
  id: 'cuda-graphlab:trace-viewer',
  description: 'Open torch.profiler traces as a CUDA graph timeline with the gap report.',
  autoStart: true,
  optional: [ICommandPalette, IFileBrowserFactory, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    browsers: IFileBrowserFactory | null,
    translator: ITranslator | null
  ) => {
    const trans = words(translator);
    const registry = app.docRegistry;
    // .json is known to JupyterLab already; these two make .json.gz openable at all and give
    // profiler traces (.pt.trace.json) the timeline as their default view.
    registry.addFileType({
      name: 'graphlab-json-gz',
      displayName: trans.__('Compressed trace'),
      extensions: ['.json.gz'],
      mimeTypes: ['application/gzip'],
      contentType: 'file',
      fileFormat: 'base64'
    });
    registry.addFileType({
      name: 'graphlab-pt-trace',
      displayName: trans.__('PyTorch profiler trace'),
      extensions: ['.pt.trace.json'],
      mimeTypes: ['application/json'],
      contentType: 'file',
      fileFormat: 'text'
    });
    registry.addModelFactory(new TraceModelFactory());
    registry.addWidgetFactory(
      new TraceViewFactory(
        {
          name: FACTORY,
          label: trans.__('CUDA graph timeline'),
          modelName: MODEL,
          fileTypes: ['json', 'graphlab-json-gz', 'graphlab-pt-trace'],
          defaultFor: ['graphlab-json-gz', 'graphlab-pt-trace'],
          readOnly: true
        },
        trans,
        courseLanguage((translator ?? nullTranslator).languageCode)
      )
    );

    app.commands.addCommand(CommandIDs.openTrace, {
      label: trans.__('Open trace as timeline'),
      caption: trans.__(
        'Open the selected profiler trace (.json, .json.gz) as a CUDA graph timeline'
      ),
      execute: async () => {
        const browser = browsers?.tracker.currentWidget;
        let path = browser ? Array.from(browser.selectedItems())[0]?.path : undefined;
        if (!path) {
          const result = await InputDialog.getText({
            title: trans.__('Open trace as timeline'),
            label: trans.__('Trace file, relative to the Jupyter root folder'),
            placeholder: 'trace.json'
          });
          path = result.button.accept ? (result.value ?? undefined) : undefined;
        }
        if (path) {
          return app.commands.execute('docmanager:open', { path, factory: FACTORY });
        }
      }
    });
    palette?.addItem({ command: CommandIDs.openTrace, category: trans.__('CUDA Graphs course') });
    // After the layout is restored, so that it never delays the page itself.
    void app.restored.then(preloadPlotly);
  }
};

export default [course, solutions, traceViewer];

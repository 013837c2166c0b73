/**
 * The first-run tour, shown by jupyterlab-tour (a dependency of the python package) through
 * its commands, so this extension needs none of its code at build time.
 *
 * Three steps: the course sidebar, the open lesson's first exercise, its first live widget.
 * JupyterLab renders only the cells near the viewport, and the tour (react-joyride) skips a step
 * whose target is not in the page: the exercise and widget steps used to vanish, or point at a
 * bar of another notebook off-screen. So, before a tour is offered or started, `prepare()`
 * renders every cell of the open lesson, marks that lesson's own exercise bar and widget cell
 * with a class of their own (the steps' targets), keeps only the steps that have a target, and
 * words the widget step for the widget it points at. Each notebook step scrolls its target to
 * the middle of the notebook itself when it begins (the tour's own scrolling misjudges a
 * notebook that scrolls inside its panel). The same preparation runs whether the tour starts
 * from the command or from jupyterlab-tour's "Try the tour" notice. The steps' words are in
 * JupyterLab's language (jupyterlab-tour's own buttons come from its own translations).
 */
import { INotebookTracker, Notebook } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { SIDEBAR_ID } from './sidebar';
import { isSolution } from './solutions';

export const TOUR_ID = 'cuda-graphlab:tour';
const ADD = 'jupyterlab-tour:add';
const LAUNCH = 'jupyterlab-tour:launch';
/** The classes `prepare()` puts on the open lesson's targets. */
export const EXERCISE_TARGET = 'graphlab-TourExercise';
export const WIDGET_TARGET = 'graphlab-TourWidget';
const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';

/** One react-joyride step, as jupyterlab-tour takes it (a type, so that it is JSON to pass). */
export type TourStep = {
  target: string;
  title: string;
  content: string;
  placement: string;
  disableBeacon: boolean;
  disableScrolling?: boolean;
};

function sidebarStep(trans: TranslationBundle): TourStep {
  return {
    target: `#${SIDEBAR_ID}`,
    title: trans.__('The course'),
    content: trans.__(
      'Every lesson, with the exercises you have passed. The line at the top says what runs ' +
        'your experiments: a real GPU, or the CPU emulator (same semantics, no timings).'
    ),
    placement: 'right',
    disableBeacon: true
  };
}

function exerciseStep(trans: TranslationBundle): TourStep {
  return {
    target: `.${EXERCISE_TARGET}`,
    title: trans.__('Exercises'),
    content: trans.__(
      'Write your answer in the cell above, run it, then run the check below it. The ' +
        'solution stays hidden, and Run All skips it, until you press Show solution.'
    ),
    placement: 'bottom',
    disableBeacon: true,
    disableScrolling: true
  };
}

/** What the widget step says, by the class the cell builds (its last line's call). */
function widgetText(kind: string | null, trans: TranslationBundle): string {
  switch (kind) {
    case 'TimelineView':
      return trans.__(
        'A timeline. Run the cell and it is live: drag to zoom into a run of kernels, hover a ' +
          'bar for its name, duration and launch latency.'
      );
    case 'PlanView':
      return trans.__(
        'A capture plan. Run the cell and it is live: the dropdown switches the trade-off ' +
          'between graph count, memory and capture time; hover a point or a bar for its figures.'
      );
    default:
      return trans.__(
        'A live widget. Until you run its cell you see the picture stored with the lesson; ' +
          'once run, its controls and zoom work.'
      );
  }
}

function widgetStep(kind: string | null, trans: TranslationBundle): TourStep {
  return {
    target: `.${WIDGET_TARGET}`,
    title: trans.__('Widgets'),
    content: widgetText(kind, trans),
    placement: 'top',
    disableBeacon: true,
    disableScrolling: true
  };
}

/**
 * The tour's buttons, as react-joyride names them. jupyterlab-tour words them itself unless a
 * tour brings its own, but not the progress on the Next button ("Next (Step 1 of 3)"), which
 * would then stay English: so the course's tour brings them all. `{step}` and `{steps}` are
 * react-joyride's placeholders.
 */
function buttons(trans: TranslationBundle): Record<string, string> {
  return {
    back: trans.__('Back'),
    close: trans.__('Close'),
    last: trans.__('Done'),
    next: trans.__('Next'),
    nextLabelWithProgress: trans.__('Next (Step {step} of {steps})'),
    open: trans.__('Open'),
    skip: trans.__('Skip')
  };
}

/** The class a widget cell builds: the call on its last line, `PlanView(hist, …)` → PlanView. */
export function widgetKind(source: string): string | null {
  const lines = source.trim().split('\n');
  const match = /^([A-Za-z_][A-Za-z0-9_]*)\(/.exec(lines[lines.length - 1] ?? '');
  return match ? match[1] : null;
}

/** The subset of jupyterlab-tour's ITourHandler this module uses. */
interface ITourHandler {
  steps: TourStep[];
  stepChanged: {
    connect(slot: (sender: unknown, data: { type: string; index: number }) => void): boolean;
  };
}

let handler: ITourHandler | null = null;

/** Register the tour, in `trans`'s language; false when jupyterlab-tour is not installed or
 * disabled. */
export async function addTour(
  commands: CommandRegistry,
  trans: TranslationBundle
): Promise<boolean> {
  if (!commands.hasCommand(ADD)) {
    return false;
  }
  const tour = {
    id: TOUR_ID,
    label: trans.__('CUDA Graphs course tour'),
    hasHelpEntry: true,
    steps: [sidebarStep(trans), exerciseStep(trans), widgetStep(null, trans)],
    options: { locale: buttons(trans) }
  };
  handler = (await commands.execute(ADD, { tour })) as ITourHandler | null;
  handler?.stepChanged.connect((_, data) => {
    if (data.type === 'step:before') {
      scrollToTarget(handler?.steps[data.index]);
    }
  });
  return handler !== null;
}

/** Bring a notebook step's target to the middle of its notebook, at once. */
function scrollToTarget(step: TourStep | undefined): void {
  if (step?.disableScrolling) {
    document.querySelector(step.target)?.scrollIntoView({ block: 'center' });
  }
}

/**
 * Mark the open lesson's exercise bar and first widget output, and return the steps that have
 * a target now (the sidebar always; the others when the open notebook has them).
 */
export function prepare(notebook: Notebook | null, trans: TranslationBundle): TourStep[] {
  for (const name of [EXERCISE_TARGET, WIDGET_TARGET]) {
    document.querySelectorAll(`.${name}`).forEach(node => node.classList.remove(name));
  }
  const steps = [sidebarStep(trans)];
  if (!notebook) {
    return steps;
  }
  // Every cell rendered, so that each target stays in the page while the tour runs.
  notebook.notebookConfig = { ...notebook.notebookConfig, windowingMode: 'none' };
  const cells = notebook.widgets;
  const solution = cells.find(cell => isSolution(cell.model));
  const bar = solution?.node.querySelector('.graphlab-SolutionBar');
  if (bar) {
    bar.classList.add(EXERCISE_TARGET);
    steps.push(exerciseStep(trans));
  }
  // The whole cell, code and output: a cell far from the viewport has no output nodes yet.
  for (const cell of cells) {
    const model = cell.model.toJSON() as { outputs?: { data?: Record<string, unknown> }[] };
    if ((model.outputs ?? []).some(o => o.data && WIDGET_MIME in o.data)) {
      cell.node.classList.add(WIDGET_TARGET);
      steps.push(widgetStep(widgetKind(cell.model.sharedModel.getSource()), trans));
      break;
    }
  }
  return steps;
}

/** Start the tour; with `force` false jupyterlab-tour offers it to whoever has not seen it. */
export async function launchTour(
  commands: CommandRegistry,
  tracker: INotebookTracker,
  force: boolean,
  trans: TranslationBundle
): Promise<unknown> {
  const panel = tracker.currentWidget;
  if (panel) {
    await panel.context.ready; // its cells, and their solution bars, exist
  }
  const steps = prepare(panel?.content ?? null, trans);
  handler?.steps.splice(0, handler.steps.length, ...steps);
  return commands.execute(LAUNCH, { id: TOUR_ID, force });
}

/**
 * The first-run tour, shown by jupyterlab-tour (a dependency of the python package) through
 * its commands, so this extension needs none of its code at build time. Steps whose target is
 * not on screen (no lesson open yet) are skipped by the tour itself. Each step opens its
 * tooltip at once (no beacon to click first): the learner asked for the tour, or accepted it.
 */
import { INotebookTracker } from '@jupyterlab/notebook';
import { CommandRegistry } from '@lumino/commands';

import { SIDEBAR_ID } from './sidebar';
import { isSolution } from './solutions';

export const TOUR_ID = 'cuda-graphlab:tour';
const ADD = 'jupyterlab-tour:add';
const LAUNCH = 'jupyterlab-tour:launch';

const TOUR = {
  id: TOUR_ID,
  label: 'CUDA Graphs course tour',
  hasHelpEntry: true,
  steps: [
    {
      target: `#${SIDEBAR_ID}`,
      title: 'The course',
      content:
        'Every lesson, with the exercises you have passed. The line at the top says what runs ' +
        'your experiments: a real GPU, or the CPU emulator (same semantics, no timings).',
      placement: 'right',
      disableBeacon: true
    },
    {
      target: '.graphlab-SolutionBar',
      title: 'Exercises',
      content:
        'Write your answer in the cell above, run it, then run the check below it. The ' +
        'solution stays hidden, and Run All skips it, until you press Show solution.',
      placement: 'bottom',
      disableBeacon: true,
      // The notebook scrolls inside its panel, which the tour's own scrolling misjudges (the
      // bar ends under the toolbar); showExercise() scrolls it into view instead.
      disableScrolling: true
    },
    {
      target: '.jp-OutputArea-output .js-plotly-plot',
      title: 'Widgets',
      content:
        'Timelines are live: drag to zoom into a run of kernels, hover a bar for its name, ' +
        'duration and launch latency.',
      placement: 'top',
      disableBeacon: true
    }
  ]
};

/** Register the tour; false when jupyterlab-tour is not installed or disabled. */
export async function addTour(commands: CommandRegistry): Promise<boolean> {
  if (!commands.hasCommand(ADD)) {
    return false;
  }
  return (await commands.execute(ADD, { tour: TOUR })) !== null;
}

/** Scroll the first solution cell of the open notebook to the middle of its panel. */
async function showExercise(tracker: INotebookTracker): Promise<void> {
  const notebook = tracker.currentWidget?.content;
  const index = notebook?.widgets.findIndex(cell => isSolution(cell.model)) ?? -1;
  if (notebook && index >= 0) {
    await notebook.scrollToItem(index, 'center');
  }
}

/** Start the tour; with `force` false it runs only for someone who has not seen it yet. */
export async function launchTour(
  commands: CommandRegistry,
  tracker: INotebookTracker,
  force: boolean
): Promise<unknown> {
  await showExercise(tracker);
  return commands.execute(LAUNCH, { id: TOUR_ID, force });
}

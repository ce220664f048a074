import {
  type Exploration,
  type ExploredCell,
  formatExploration as formatScenario,
  plural,
  renderExplorePage as renderPage,
} from '@sqs-delivery-semantics/explorer';
import type { ModeExploration } from './explore.js';
import type { LabScenario } from './lab-scenario.js';

export { cellText, deliveryLine } from '@sqs-delivery-semantics/explorer';

export interface ExploreReport {
  readonly scenario: LabScenario;
  readonly depth: 1 | 2;
  readonly modes: readonly ModeExploration[];
  readonly cells: number;
  /** Cells where a mode's promise did not hold. */
  readonly broken: number;
  readonly seconds: number;
}

/** The command that runs one cell alone, with its trace. */
export function replayCommand(mode: string, scenario: LabScenario, cell: string): string {
  return `npm run explore -- --modes ${mode} --events ${scenario.events} --accounts ${scenario.accounts}${scenario.resent ? ` --resent ${scenario.resent}` : ''} --cell ${cell}`;
}

const labReplay =
  (scenario: LabScenario) =>
  (exploration: Exploration, cell: ExploredCell): string =>
    replayCommand(exploration.scenario, scenario, cell.plan);

/** Per mode, the explorer's matrix (its promise, steps down, faults across, the retry cells), then the total. */
export function formatExploration(report: ExploreReport): string {
  const sections = report.modes.map((exploration) => formatScenario(exploration, labReplay(report.scenario)));
  const singles = report.modes.reduce((sum, mode) => sum + mode.counts.single, 0);
  const retries = report.modes.reduce((sum, mode) => sum + mode.counts.retry, 0);
  return [
    ...sections.map((section) => `${section}\n`),
    `${plural(report.cells, 'cell')} (${singles} single, ${retries} on a retry) in ${report.seconds.toFixed(1)} s (${report.scenario.events} events on ` +
      `${plural(report.scenario.accounts, 'account')}, depth ${report.depth}); ` +
      (report.broken > 0 ? `a promise broke in ${plural(report.broken, 'cell')}` : 'every promise held'),
  ].join('\n');
}

/** The page: per mode, the matrix as coloured cells, each cell's trace and replay command on hover. */
export function renderExplorePage(report: ExploreReport): string {
  return renderPage(report.modes, {
    title: 'Every crash point',
    subtitle: `${report.scenario.events} events on ${plural(report.scenario.accounts, 'account')}, one batch; depth ${report.depth}; ${plural(report.cells, 'cell')} in ${report.seconds.toFixed(1)} s.`,
    replay: labReplay(report.scenario),
  });
}

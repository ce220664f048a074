import {
  type Exploration,
  type ExploredCell,
  formatExploration as formatScenario,
  plural,
  renderExplorePage as renderPage,
  type ScheduleRun,
} from '@sqs-delivery-semantics/explorer';
import { alignedTable } from '../../report/aligned-table.js';
import type { ModeExploration } from './explore.js';
import type { LabDetail, LabScenario } from './lab-scenario.js';

export { cellText, deliveryLine } from '@sqs-delivery-semantics/explorer';

export interface ExploreReport {
  readonly scenario: LabScenario;
  readonly depth: 1 | 2;
  /** Two invocations in flight at once instead of the fault cells. */
  readonly interleavings?: true;
  readonly modes: readonly ModeExploration[];
  readonly cells: number;
  /** Cells where a mode's promise did not hold. */
  readonly broken: number;
  readonly seconds: number;
}

/** The command that runs one cell alone, with its trace. */
export function replayCommand(mode: string, scenario: LabScenario, cell: string): string {
  return `${scenarioCommand(mode, scenario)} --cell ${cell}`;
}

/** `npm run explore` on one mode and the lab scenario as given. */
function scenarioCommand(mode: string, scenario: LabScenario): string {
  return `npm run explore -- --modes ${mode} --events ${scenario.events} --accounts ${scenario.accounts}${scenario.resent ? ` --resent ${scenario.resent}` : ''}`;
}

const labReplay =
  (scenario: LabScenario) =>
  (exploration: Exploration, cell: ExploredCell): string =>
    replayCommand(exploration.scenario, scenario, cell.plan);

/** The command that runs one interleaving schedule alone, with its steps in two columns. */
export function scheduleCommand(mode: string, scenario: LabScenario, schedule: string): string {
  return `${scenarioCommand(mode, scenario)} --schedule ${schedule}`;
}

const labScheduleReplay =
  (scenario: LabScenario) =>
  (exploration: Exploration, run: ScheduleRun): string =>
    scheduleCommand(exploration.scenario, scenario, run.schedule);

/** The interleaving table's columns (the terminal's and the docs'). */
export const INTERLEAVING_COLUMNS = [
  'mode',
  'scenario',
  'schedules',
  'exact',
  'duplicated',
  'lost',
  'promise broken',
];

/** What "(n)" counts, under the interleaving table. */
export const INTERLEAVING_NOTE =
  "(n): of those, the schedules that chose only an order of the two invocations' steps: no stale-delete outcome, refusal or deadline";

/**
 * Per mode and interleaving scenario: the schedules run and what the verifier counted in them
 * (exact; with an event applied twice; with one lost), and how many broke the mode's promise.
 */
export function interleavingRows(modes: readonly ModeExploration[]): string[][] {
  return modes.flatMap((exploration) =>
    (exploration.interleavings ?? []).map((interleaving) => {
      if (interleaving.skipped !== undefined)
        return [exploration.mode, interleaving.kind, 'n/a', '', '', '', '', ''];
      const runs = interleaving.schedules;
      const counts = (run: ScheduleRun) => (run.detail as LabDetail | undefined)?.counts;
      /** How many schedules show it, and of those how many with no fault or refusal injected. */
      const showing = (test: (run: ScheduleRun) => boolean) => {
        const all = runs.filter(test);
        return all.length === 0 ? '0' : `${all.length} (${all.filter((run) => !run.injected).length})`;
      };
      return [
        exploration.mode,
        interleaving.kind,
        `${runs.length} (${runs.filter((run) => !run.injected).length})`,
        showing((run) => (run.detail as LabDetail | undefined)?.exact === true),
        showing((run) => (counts(run)?.duplicated ?? 0) > 0),
        showing((run) => (counts(run)?.lost ?? 0) > 0),
        showing((run) => !run.held),
      ];
    }),
  );
}

/** The interleaving table as the terminal prints it, and what "(n)" counts. */
export function interleavingTable(modes: readonly ModeExploration[]): string[] {
  return [
    ...alignedTable(INTERLEAVING_COLUMNS, interleavingRows(modes))
      .split('\n')
      .map((line) => line.trimEnd()),
    INTERLEAVING_NOTE,
  ];
}

/** Per mode, the explorer's matrix (its promise, steps down, faults across, the retry cells), then the total. */
export function formatExploration(report: ExploreReport): string {
  if (report.interleavings) {
    const schedules = report.modes.reduce(
      (sum, mode) => sum + (mode.interleavings ?? []).reduce((each, run) => each + run.schedules.length, 0),
      0,
    );
    return [
      ...report.modes.map(
        (exploration) =>
          `${formatScenario(exploration, labReplay(report.scenario), labScheduleReplay(report.scenario))}\n`,
      ),
      ...interleavingTable(report.modes),
      '',
      `${plural(schedules, 'schedule')} in ${report.seconds.toFixed(1)} s (${report.scenario.events} events on ${plural(report.scenario.accounts, 'account')}); ` +
        (report.broken > 0
          ? `a promise broke in ${plural(report.broken, 'schedule')}`
          : 'every promise held'),
    ].join('\n');
  }
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
    title: report.interleavings ? 'Two invocations at once' : 'Every crash point',
    subtitle: report.interleavings
      ? `${report.scenario.events} events on ${plural(report.scenario.accounts, 'account')}; two invocations in flight at once, every schedule, in ${report.seconds.toFixed(1)} s.`
      : `${report.scenario.events} events on ${plural(report.scenario.accounts, 'account')}, one batch; depth ${report.depth}; ${plural(report.cells, 'cell')} in ${report.seconds.toFixed(1)} s.`,
    replay: labReplay(report.scenario),
    scheduleReplay: labScheduleReplay(report.scenario),
  });
}

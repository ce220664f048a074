import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  DEFAULT_FUNCTION_TIMEOUT_MS,
  PlanError,
  type PlannedFault,
  parsePlan,
  ScheduleError,
  scheduleColumns,
} from '@sqs-delivery-semantics/explorer';
import type { Mode } from '../../../contract/topology.js';
import { PROJECT_ROOT } from '../../../stack/bundling.js';
import type { ParsedOptions } from '../../options/parse.js';
import type { Finished } from '../../options/run.js';
import { UsageError } from '../../options/usage-error.js';
import { startExploreEnvironment } from './environment.js';
import { exploreMode, type ModeExploration } from './explore.js';
import type { LabScenario } from './lab-scenario.js';
import {
  cellText,
  deliveryLine,
  type ExploreReport,
  formatExploration,
  renderExplorePage,
  replayCommand,
} from './report.js';
import { exploreScenarioFile } from './scenario-file.js';

/** The default scenarios: depth 1 in about a minute for every mode, depth 2 (the square) smaller. */
export const DEFAULT_SCENARIOS: Readonly<Record<1 | 2, Omit<LabScenario, 'resent'>>> = {
  1: { events: 3, accounts: 2 },
  2: { events: 2, accounts: 1 },
};

/** The interleavings' scenario: two events on one account (hot-key takes both, the others the first). */
export const INTERLEAVING_SCENARIO: Omit<LabScenario, 'resent'> = { events: 2, accounts: 1 };

/** `--cell killed-before@1:evt-0000000:UpdateItem:1:1[,…]` as the faults it plans. */
export function parseCell(text: string): PlannedFault[] {
  try {
    return parsePlan(text);
  } catch (error) {
    throw error instanceof PlanError ? new UsageError(`--cell ${error.message}`) : error;
  }
}

export async function explore({ values }: ParsedOptions<'explore'>): Promise<Finished> {
  const depth = values.depth === 2 ? 2 : 1;
  if (values.scenario !== undefined) {
    return exploreScenarioFile(values.scenario, {
      depth,
      concurrency: values.parallel,
      ...(values.cell !== undefined ? { cell: values.cell } : {}),
      json: values.json,
    });
  }
  const interleavings = values.interleavings || values.schedule !== undefined;
  if (interleavings && (values.cell !== undefined || depth === 2)) {
    throw new UsageError(
      `${values.cell !== undefined ? '--cell' : '--depth 2'} with --interleavings: an interleaving runs no fault cells (replay one with --schedule)`,
    );
  }
  const defaults = interleavings ? INTERLEAVING_SCENARIO : DEFAULT_SCENARIOS[depth];
  const scenario: LabScenario = {
    events: values.events ?? defaults.events,
    accounts: values.accounts ?? defaults.accounts,
    resent: values.resent,
  };
  if (scenario.events + scenario.resent > 10) {
    throw new UsageError(
      `--events ${scenario.events}${scenario.resent ? ` with --resent ${scenario.resent}` : ''}: the scenario is one batch, at most 10 messages`,
    );
  }
  if (scenario.resent > scenario.events) {
    throw new UsageError(`--resent ${scenario.resent}: more than the scenario's ${scenario.events} events`);
  }
  const only = values.cell === undefined ? undefined : [parseCell(values.cell)];
  const say = (message: string) => process.stderr.write(`• ${message}\n`);
  say(`starting the emulators for ${values.modes.join(', ')}`);
  const env = await startExploreEnvironment(values.modes);
  const started = performance.now();
  const modes: ModeExploration[] = [];
  try {
    for (const mode of values.modes) {
      say(
        interleavings
          ? `${mode}: every schedule of two invocations in flight at once (two-deliveries, hot-key, in-doubt)`
          : `${mode}: a clean run records the trace, then one cell per step and fault`,
      );
      let lastShown = 0;
      const exploration = await exploreMode(env, mode, {
        scenario,
        depth,
        concurrency: values.parallel,
        ...(only ? { only } : {}),
        onCell: (_, done, total) => {
          if (done === total || performance.now() - lastShown > 5_000) {
            lastShown = performance.now();
            say(`${mode}: ${done}/${total} cells`);
          }
        },
        ...(interleavings
          ? {
              interleavings: values.schedule !== undefined ? { schedules: [values.schedule] } : {},
              onSchedule: (_: Mode, done: number) => {
                if (performance.now() - lastShown > 5_000) {
                  lastShown = performance.now();
                  say(`${mode}: ${done} schedules`);
                }
              },
            }
          : {}),
      }).catch((error: unknown) => {
        throw error instanceof PlanError || error instanceof ScheduleError
          ? new UsageError(error.message)
          : error;
      });
      // Every cell with the command that replays it.
      modes.push({
        ...exploration,
        cells: exploration.cells.map((cell) => ({
          ...cell,
          replay: replayCommand(mode, scenario, cell.plan),
        })),
      });
    }
  } finally {
    await env.stop();
  }
  const cells = modes.reduce((sum, mode) => sum + mode.cells.length, 0);
  const broken = modes.reduce(
    (sum, mode) =>
      sum +
      mode.cells.filter((cell) => !cell.promiseHeld).length +
      (mode.interleavings ?? []).reduce(
        (each, run) => each + run.schedules.filter((one) => !one.held || one.timedOut).length,
        0,
      ),
    0,
  );
  const timedOut = modes.reduce((sum, mode) => sum + mode.cells.filter((cell) => cell.timedOut).length, 0);
  if (timedOut > 0) {
    say(
      `${timedOut} cell(s) ran into the ${DEFAULT_FUNCTION_TIMEOUT_MS} ms function timeout: not the cells planned (marked "timed out"); run fewer at once (--parallel)`,
    );
  }
  const report: ExploreReport = {
    scenario,
    depth,
    ...(interleavings ? { interleavings: true } : {}),
    modes,
    cells,
    broken,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  const dir = join(PROJECT_ROOT, 'reports');
  mkdirSync(dir, { recursive: true });
  const name = `explore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const reportPath = join(dir, `${name}.json`);
  const pagePath = join(dir, `${name}.html`);
  const json = JSON.stringify(report, null, 2);
  writeFileSync(reportPath, `${json}\n`);
  writeFileSync(pagePath, renderExplorePage(report));
  const exitCode = broken > 0 ? 1 : 0;
  if (values.json) {
    // Written whole before the process exits: a pipe takes hundreds of kB in pieces.
    await new Promise<void>((resolve) => process.stdout.write(`${json}\n`, () => resolve()));
    return { exitCode };
  }
  if (values.schedule !== undefined) {
    for (const exploration of modes) {
      for (const run of (exploration.interleavings ?? []).flatMap((each) => each.schedules)) {
        process.stdout.write(
          `${exploration.mode}: ${run.schedule}: ${run.held ? run.summary : `${run.violations.join('; ')} !`}\n`,
        );
        for (const line of scheduleColumns(run.timeline)) process.stdout.write(`  ${line}\n`);
        for (const delivery of run.deliveries) process.stdout.write(`  ${deliveryLine(delivery)}\n`);
      }
    }
  } else if (only) {
    for (const exploration of modes) {
      for (const cell of exploration.cells) {
        process.stdout.write(`${exploration.mode}: ${cellText(cell)}\n`);
        for (const delivery of cell.deliveries) process.stdout.write(`  ${deliveryLine(delivery)}\n`);
      }
    }
  } else {
    process.stdout.write(`${formatExploration(report)}\n`);
  }
  say(`written: ${relative(process.cwd(), reportPath)}`);
  return { exitCode, report: reportPath, page: pagePath };
}

/** The figures of whole runs: the README's sample run, and the default run's time (bench:default-run). */

import { formatTable } from '../../report/result-table.js';
import type { TableReport } from '../../report/violations.js';
import type { ExperimentReport } from '../../run/experiment.js';
import { spread } from '../benchmarks/spread.js';
import { markdownTable } from './markdown.js';

/** The sample run as its summary keeps it: the table's rows and the run's settings, not its events. */
export interface SampleRun extends TableReport {
  readonly runId: string;
  readonly durationMs: number;
}

export function sampleRunOf(report: ExperimentReport): SampleRun {
  const modes = Object.fromEntries(
    Object.entries(report.modes).map(([mode, outcome]) => {
      // Per-event detail (--json's events) is for the page, not the table.
      const { events: _events, ...counts } = outcome as typeof outcome & { events?: unknown };
      return [mode, counts];
    }),
  );
  return { runId: report.runId, durationMs: report.durationMs, modes };
}

/** The result table exactly as the terminal prints it, full width. */
export const sampleRunTable = (run: SampleRun): string => `\`\`\`\n${formatTable(run)}\n\`\`\``;

/** One run of bench:default-run, as its report (reports/bench-default-run-*.json) keeps it. */
export interface DefaultRunTiming {
  readonly checkout: string;
  readonly seed: string;
  readonly wallMs: number;
  readonly phasesMs?: ExperimentReport['phasesMs'];
  /** When each delivery round of the drain was done, from the drain's start (older reports: absent). */
  readonly drainRoundsDoneAtMs?: readonly number[];
  /** The invocation closest to its mode's function timeout, and that timeout (older reports: absent). */
  readonly slowestInvocationMs?: number;
  readonly functionTimeoutSeconds?: number;
  readonly timeouts: number;
  readonly overruns: number;
  readonly problems: readonly string[];
}

/** reports/bench-default-run-<timestamp>.json (harness/commands/run-bench-default-run.ts writes it). */
export interface DefaultRunReport {
  readonly runs: number;
  readonly extraArgs: readonly string[];
  readonly timings: readonly DefaultRunTiming[];
}

/** The default run's times as the summary keeps them: this checkout's runs, not a compared one's. */
export interface DefaultRunTimes {
  readonly timings: readonly Omit<DefaultRunTiming, 'checkout'>[];
}

export function defaultRunTimesOf(report: DefaultRunReport): DefaultRunTimes {
  const here = report.timings[0]?.checkout;
  return {
    timings: report.timings
      .filter((timing) => timing.checkout === here)
      .map(({ checkout: _checkout, ...timing }) => timing),
  };
}

const seconds = (ms: number | undefined) => (ms === undefined ? '–' : (ms / 1000).toFixed(1));

/**
 * Per run: its seed, its wall time (whole process), phases, when each delivery round of the drain
 * was done, and its slowest invocation against the function timeout; then the median of each
 * column (the rounds' count, the slowest invocation's worst).
 */
export function defaultRunTable(times: DefaultRunTimes): string {
  const rows = times.timings.map((t) => [
    `\`${t.seed}\``,
    seconds(t.wallMs),
    seconds(t.phasesMs?.startup),
    seconds(t.phasesMs?.produce),
    seconds(t.phasesMs?.drain),
    t.drainRoundsDoneAtMs ? t.drainRoundsDoneAtMs.map(seconds).join(' · ') : '–',
    seconds(t.phasesMs?.verify),
    t.slowestInvocationMs === undefined
      ? '–'
      : `${seconds(t.slowestInvocationMs)} of ${t.functionTimeoutSeconds ?? '–'}`,
    String(t.timeouts),
    String(t.overruns),
    t.problems.length === 0 ? 'kept' : t.problems.join('; '),
  ]);
  const roundCounts = times.timings.flatMap((t) =>
    t.drainRoundsDoneAtMs ? [t.drainRoundsDoneAtMs.length] : [],
  );
  const slowest = times.timings.flatMap((t) =>
    t.slowestInvocationMs !== undefined ? [t.slowestInvocationMs] : [],
  );
  // A failed run has no phases: the phases' medians are over the runs that have them.
  const phase = (key: keyof ExperimentReport['phasesMs']) =>
    seconds(spread(times.timings.flatMap((t) => (t.phasesMs ? [t.phasesMs[key]] : []))).median);
  rows.push([
    '**median** (timeouts, overruns: in all)',
    `**${seconds(spread(times.timings.map((t) => t.wallMs)).median)}**`,
    phase('startup'),
    phase('produce'),
    phase('drain'),
    roundCounts.length > 0 ? `${spread(roundCounts).median} rounds` : '–',
    phase('verify'),
    slowest.length > 0 ? `${seconds(Math.max(...slowest))} at most` : '–',
    String(times.timings.reduce((sum, t) => sum + t.timeouts, 0)),
    String(times.timings.reduce((sum, t) => sum + t.overruns, 0)),
    '',
  ]);
  return markdownTable(
    [
      'seed',
      'whole process s',
      'startup s',
      'produce s',
      'drain s',
      'drain rounds done at s',
      'verify s',
      'slowest invocation s (of the timeout)',
      'timeouts',
      'overruns',
      'signatures',
    ],
    rows,
  );
}

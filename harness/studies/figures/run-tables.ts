/** The figures of whole runs: the README's sample run, and the default run's time (bench:default-run). */

import { markdownTable } from '../../report/figures/markdown.js';
import { formatTable } from '../../report/result-table.js';
import type { TableReport } from '../../report/violations.js';
import type { ExperimentReport } from '../../run/experiment.js';

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
interface DefaultRunTiming {
  readonly seed: string;
  readonly wallMs: number;
  readonly phasesMs?: {
    readonly startup: number;
    readonly produce: number;
    readonly drain: number;
    readonly verify: number;
  };
  readonly timeouts: number;
  readonly overruns: number;
  readonly problems: readonly string[];
}

export interface DefaultRunTimes {
  readonly extraArgs: readonly string[];
  readonly timings: readonly DefaultRunTiming[];
}

export function defaultRunTimesOf(report: {
  readonly extraArgs: readonly string[];
  readonly timings: readonly (DefaultRunTiming & { readonly checkout: string })[];
}): DefaultRunTimes {
  const here = report.timings[0]?.checkout;
  return {
    extraArgs: report.extraArgs,
    timings: report.timings
      .filter((timing) => timing.checkout === here)
      .map(({ checkout: _checkout, ...timing }) => timing),
  };
}

const seconds = (ms: number | undefined) => (ms === undefined ? '–' : (ms / 1000).toFixed(1));

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** Per run: its seed, its wall time (whole process) and phases; then the median of each column. */
export function defaultRunTable(times: DefaultRunTimes): string {
  const rows = times.timings.map((t) => [
    `\`${t.seed}\``,
    seconds(t.wallMs),
    seconds(t.phasesMs?.startup),
    seconds(t.phasesMs?.produce),
    seconds(t.phasesMs?.drain),
    seconds(t.phasesMs?.verify),
    String(t.timeouts),
    String(t.overruns),
    t.problems.length === 0 ? 'kept' : t.problems.join('; '),
  ]);
  const phase = (key: keyof NonNullable<DefaultRunTiming['phasesMs']>) =>
    seconds(median(times.timings.map((t) => t.phasesMs?.[key] ?? 0)));
  rows.push([
    '**median**',
    `**${seconds(median(times.timings.map((t) => t.wallMs)))}**`,
    phase('startup'),
    phase('produce'),
    phase('drain'),
    phase('verify'),
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
      'verify s',
      'timeouts',
      'overruns',
      'signatures',
    ],
    rows,
  );
}

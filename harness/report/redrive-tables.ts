/** The redrive's tables, the result tables around them, and `npm run redrive`'s output. */
import type { ExperimentReport } from '../run/experiment.js';
import type { RedriveRunReport } from '../run/redrive-run.js';
import { alignedTable } from './aligned-table.js';
import { money } from './money.js';
import { formatTable, type ResultCell } from './result-table.js';
import { seconds } from './seconds.js';
import { modeRows, type TableReport, violations } from './violations.js';

export const REDRIVE_COLUMNS = [
  'mode',
  'dead-lettered before',
  'redriven',
  'applied after the redrive',
  'duplicated by the redrive',
  'dead-lettered again',
  'too old to dedupe',
  'lost',
  'unexpected',
  'drift',
  'consistent',
] as const;

/**
 * The redrive table's cells per mode (REDRIVE_COLUMNS order), for the modes that were redriven;
 * marked as the result table is, from the outcome after the redrive (the mode's own fields).
 */
export function redriveRows(report: TableReport): ResultCell[][] {
  return modeRows(report).flatMap(([mode, m]) => {
    const r = m.redrive;
    if (!r) return [];
    const flagged = violations(mode, m);
    const cell = (text: string, impossible = false): ResultCell => ({ text, impossible });
    return [
      [
        cell(mode),
        cell(String(r.deadLetteredBefore)),
        cell(String(r.redriven)),
        cell(String(r.appliedAfterRedrive)),
        cell(String(r.duplicatedByRedrive), r.duplicatedByRedrive > 0 && flagged.has('duplicated')),
        cell(String(r.deadLetteredAgain)),
        // Older reports have no refusal count: they had no age guard.
        cell(String(m.tooOldToDedupe ?? 0)),
        cell(String(r.lost), flagged.has('lost')),
        cell(String(m.unexpected), flagged.has('unexpected')),
        cell(money(m.driftCents), flagged.has('driftCents')),
        m.consistent ? cell('yes') : cell('NO', true),
      ],
    ];
  });
}

/**
 * The run as the first drain left it, before the redrive: each redriven mode's `redrive.firstDrain`,
 * with the runtime's counts of that moment (which the marks read) and the producer's unsent events
 * (a dual write's: not the consumer's loss). Undefined when no mode was redriven.
 */
export function firstDrainOf(report: TableReport): TableReport | undefined {
  const rows = modeRows(report).flatMap(([mode, m]) =>
    m.redrive
      ? [[mode, { ...(m.neverSent ? { neverSent: m.neverSent } : {}), ...m.redrive.firstDrain }] as const]
      : [],
  );
  return rows.length > 0 ? { modes: Object.fromEntries(rows) } : undefined;
}

/** The table of what the redrive did, when the run had one. */
export function formatRedriveTable(report: TableReport): string | undefined {
  const rows = redriveRows(report);
  if (rows.length === 0) return undefined;
  return alignedTable(
    [...REDRIVE_COLUMNS],
    rows.map((cells) => cells.map(({ text, impossible }) => (impossible ? `${text} !` : text))),
  );
}

/** The heading of the result table of a redrive run: it shows the final state. */
const FINAL_STATE_HEADING = 'after the redrive (the final state):';
/** The heading of the first drain's result table, below the redrive's. */
const FIRST_DRAIN_HEADING = 'the first drain, before the redrive:';

/**
 * `the redrive (5 s after the first drain; move 0.4 s, drain 9.8 s, verify 1.1 s):`; `when` says
 * when the redrive ran, where it was not after a first drain.
 */
export function redriveHeading(report: Pick<ExperimentReport, 'redrive'>, when?: string): string {
  const r = report.redrive;
  if (!r) return 'the redrive:';
  const at =
    when ??
    (r.afterSeconds > 0 ? `${r.afterSeconds} s after the first drain` : 'right after the first drain');
  return `the redrive (${at}; move ${seconds(r.phasesMs.move)}, drain ${seconds(r.phasesMs.drain)}, verify ${seconds(r.phasesMs.verify)}):`;
}

/**
 * `npm run redrive`'s output, as the experiment prints a redrive run: the run after the redrive, what
 * the redrive did, then the run as it stood before it.
 */
export function formatRedriveRun(report: RedriveRunReport, stackName: string): string {
  const modes = Object.keys(report.modes).length;
  return [
    `redrive of run ${report.runId} on ${report.target} (stack ${stackName}): ${modes} mode${modes === 1 ? '' : 's'}, ` +
      `${seconds(report.durationMs)} (verify before the redrive ${seconds(report.phasesMs.verify)})`,
    '',
    ...redriveRunTables(
      report,
      redriveHeading({ redrive: { afterSeconds: 0, ...report.redrive } }, 'of the finished run'),
    ),
  ].join('\n');
}

/**
 * A redrive run's tables: the final state, what the redrive did, the first drain; or the result
 * table alone when nothing was redriven. Ends with an empty line.
 */
export function redriveRunTables(
  report: TableReport,
  heading: string,
  width = Number.POSITIVE_INFINITY,
): string[] {
  const redrive = formatRedriveTable(report);
  const firstDrain = firstDrainOf(report);
  if (redrive === undefined || firstDrain === undefined) return [formatTable(report, width), ''];
  return [
    FINAL_STATE_HEADING,
    formatTable(report, width),
    '',
    heading,
    redrive,
    '',
    FIRST_DRAIN_HEADING,
    formatTable(firstDrain, width),
    '',
  ];
}

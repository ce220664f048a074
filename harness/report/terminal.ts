import { MODES, type Mode } from '../../contract/topology.js';
import type { ModeOutcome } from '../../verifier/outcome.js';
import type { LiveModeStats } from '../environments/environment.js';
import { anyFault, type FaultSettings } from '../local-aws/faults/faults.js';
import type { DrainSnapshot } from '../run/drain.js';
import type { ExperimentReport, ModeReport } from '../run/experiment.js';
import type { RedriveRunReport } from '../run/redrive-run.js';
import { alignedTable } from './aligned-table.js';
import { compactTable, tableWidth } from './compact-table.js';

export { alignedTable } from './aligned-table.js';

const money = (cents: number): string => {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
};

/**
 * A mode's row as the tables read it: the verifier's outcome, and what an experiment adds when it
 * has it (the local runtime's counts, the redrive). An experiment's report fits, and so does
 * `npm run redrive`'s (harness/run/redrive-run.ts).
 */
type ModeRow = ModeOutcome & Partial<Pick<ModeReport, 'runtime' | 'redrive' | 'neverSent'>>;

/** A report as the result and redrive tables read it: its modes' rows. */
export interface TableReport {
  readonly modes: Partial<Record<Mode, ModeRow>>;
}

/** The report's modes as [mode, outcome] pairs, in report (topology) order. */
const modeRows = (report: TableReport): [Mode, ModeRow][] =>
  Object.entries(report.modes) as [Mode, ModeRow][];

/**
 * Whether the environment itself delivered some record twice, or sent a write twice: then
 * at-most-once's duplicates are the environment's, not a broken promise (its "never twice" holds
 * per SQS delivery, and its credit is one UpdateItem, which has no idempotency token: a response
 * lost on the way back is sent again by the SDK and applied again).
 */
function deliveredTwiceByEnvironment(mode: Mode, outcome: ModeRow): boolean {
  return (
    outcome.producerDuplicates > 0 ||
    (outcome.runtime?.injected.redelivered ?? 0) > 0 ||
    (outcome.runtime?.visibilityOverruns ?? 0) > 0 ||
    // For the mode that deletes before it works: an applied message that also reached the DLQ was
    // delivered again after its delete (a delete with a stale receipt handle succeeds without
    // deleting), and its redriven copy is one more delivery. It applies each, as its promise allows
    // (per delivery, not per event); so does its unconditional credit, sent again by the SDK after
    // a lost response. Every other mode's duplicate stays marked.
    (MODES[mode].deletesOwnBatch &&
      ((outcome.runtime?.injected.lostResponses ?? 0) > 0 ||
        outcome.appliedAndDeadLettered > 0 ||
        (outcome.redrive?.duplicatedByRedrive ?? 0) > 0))
  );
}

/**
 * The counts of a mode that a correct run cannot produce: always-impossible ones (unexpected
 * applications, payloads that differ from the manifest, a ledger that does not add up) and the
 * mode's own promises (contract/topology.ts).
 */
export function violations(mode: Mode, outcome: ModeRow): Set<keyof ModeRow> {
  const flagged = new Set<keyof ModeRow>();
  if (outcome.unexpected !== 0) flagged.add('unexpected');
  if (outcome.payloadMismatches !== 0 && outcome.conflictingReuse === 0) flagged.add('payloadMismatches');
  if (!outcome.consistent) flagged.add('consistent');
  const { promises } = MODES[mode];
  // Events a dual-writing producer committed and never sent are lost before any queue: its loss.
  const unsent = outcome.neverSent ?? { events: 0, cents: 0 };
  if (promises.noLoss && outcome.lost !== unsent.events) flagged.add('lost');
  if (promises.noDuplicates && outcome.duplicated !== 0 && !deliveredTwiceByEnvironment(mode, outcome))
    flagged.add('duplicated');
  // Money in the DLQ is not drift: a dead-lettered event is accounted for, just not applied.
  if (
    promises.noLoss &&
    promises.noDuplicates &&
    outcome.driftCents !== -outcome.deadLetteredCents - unsent.cents
  )
    flagged.add('driftCents');
  return flagged;
}

export const RESULT_COLUMNS = [
  'mode',
  'produced',
  'deliveries',
  'applied once',
  'duplicated (extra)',
  'lost',
  'dead-lettered',
  'unexpected',
  'mismatched',
  'expected',
  'actual',
  'drift',
  'crashes',
  'consistent',
] as const;

/** One cell of the result table: its text, and whether a correct run could not have produced it. */
export interface ResultCell {
  readonly text: string;
  readonly impossible: boolean;
}

/** The result table's cells per mode, in RESULT_COLUMNS order: the terminal and the page render them. */
export function resultRows(report: TableReport): ResultCell[][] {
  return modeRows(report).map(([mode, m]) => {
    const flagged = violations(mode, m);
    const cell = (text: string, field?: keyof ModeRow): ResultCell => ({
      text,
      impossible: field !== undefined && flagged.has(field),
    });
    return [
      cell(mode),
      cell(String(m.produced)),
      cell(String(m.deliveries)),
      cell(String(m.appliedOnce)),
      cell(`${m.duplicated} (${m.extraApplications})`, 'duplicated'),
      cell(String(m.lost), 'lost'),
      cell(String(m.deadLettered)),
      cell(String(m.unexpected), 'unexpected'),
      cell(String(m.payloadMismatches), 'payloadMismatches'),
      cell(money(m.expectedCents)),
      cell(money(m.actualCents)),
      cell(money(m.driftCents), 'driftCents'),
      cell(String(m.crashes)),
      m.consistent ? cell('yes') : { text: 'NO', impossible: true },
    ];
  });
}

/**
 * The result table: one row per mode; a count a correct run cannot produce is marked with `!`.
 * Wider than `width` (the terminal's), it folds: compactTable.
 */
export function formatTable(report: TableReport, width = Number.POSITIVE_INFINITY): string {
  const rows = resultRows(report).map((cells) =>
    cells.map(({ text, impossible }) => (impossible ? `${text} !` : text)),
  );
  const full = alignedTable([...RESULT_COLUMNS], rows);
  return tableWidth(full) <= width ? full : compactTable([...RESULT_COLUMNS], rows);
}

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
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const at =
    when ??
    (r.afterSeconds > 0 ? `${r.afterSeconds} s after the first drain` : 'right after the first drain');
  return `the redrive (${at}; move ${s(r.phasesMs.move)}, drain ${s(r.phasesMs.drain)}, verify ${s(r.phasesMs.verify)}):`;
}

/**
 * `npm run redrive`'s output, as the experiment prints a redrive run: the run after the redrive, what
 * the redrive did, then the run as it stood before it.
 */
export function formatRedriveRun(report: RedriveRunReport, stackName: string): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const modes = Object.keys(report.modes).length;
  return [
    `redrive of run ${report.runId} on ${report.target} (stack ${stackName}): ${modes} mode${modes === 1 ? '' : 's'}, ` +
      `${s(report.durationMs)} (verify before the redrive ${s(report.phasesMs.verify)})`,
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
function redriveRunTables(report: TableReport, heading: string, width = Number.POSITIVE_INFINITY): string[] {
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

export const FAULT_COLUMNS = [
  'poison',
  're-sent',
  'redelivered',
  'throttled',
  '5xx',
  'lost responses',
  'conflicts',
  'outage 503s',
  'killed',
  'slow',
  'timeouts',
  'overruns',
  'retried cancellations',
  'conflicting reuse',
] as const;

/**
 * The fault table's rows, mode first then FAULT_COLUMNS: what was injected and what the runtime
 * saw. `notMeasured` stands for a count only the local runtime can see, on a deployed target.
 */
export function faultRows(report: Pick<ExperimentReport, 'modes'>, notMeasured: string): string[][] {
  return modeRows(report).map(([mode, m]) => {
    const injected = m.runtime?.injected;
    const live = (value: number | undefined) => (value === undefined ? notMeasured : String(value));
    return [
      mode,
      String(m.poison),
      String(m.producerDuplicates),
      live(injected?.redelivered),
      live(injected?.throttled),
      live(injected?.serverErrors),
      live(injected?.lostResponses),
      live(injected?.conflicts),
      // Older reports have no outage count: none was injected.
      live(injected && (injected.outageRejections ?? 0)),
      live(injected?.kills),
      live(injected?.slowInvocations),
      live(m.runtime?.timeouts),
      live(m.runtime?.visibilityOverruns),
      String(m.retriedCancellations),
      String(m.conflictingReuse),
    ];
  });
}

export const CHARGE_COLUMNS = [
  'charges',
  'charged',
  'double-charged',
  'never charged',
  'charged, not recorded',
  'recorded, charge not found',
  'unexpected charges',
  'overcharged',
  'responses lost',
] as const;

/**
 * The charge modes' cells (CHARGE_COLUMNS after the mode): what the payment provider's ledger says
 * the cards saw. A double charge breaks a mode with an idempotency key; an unexpected charge, or a
 * valid event never charged, any charge mode.
 */
export function chargeRows(report: TableReport): ResultCell[][] {
  return modeRows(report).flatMap(([mode, m]) => {
    const charge = MODES[mode] as { readonly charge?: { readonly idempotencyKey: boolean } };
    if (charge.charge === undefined || m.charges === undefined) return [];
    const cell = (text: string, impossible = false): ResultCell => ({ text, impossible });
    const overcharged = m.overchargedCents ?? 0;
    // A dual-writing producer's unsent events reached no consumer, so no card either.
    const neverCharged = (m.neverCharged ?? 0) - (m.neverSent?.events ?? 0);
    return [
      [
        cell(mode),
        cell(String(m.charges)),
        cell(money(m.chargedCents ?? 0)),
        cell(String(m.doubleCharged ?? 0), charge.charge.idempotencyKey && (m.doubleCharged ?? 0) > 0),
        cell(String(m.neverCharged ?? 0), neverCharged > 0),
        cell(String(m.chargedNotRecorded ?? 0)),
        cell(String(m.recordedChargeNotFound ?? 0), (m.recordedChargeNotFound ?? 0) > 0),
        cell(String(m.unexpectedCharges ?? 0), (m.unexpectedCharges ?? 0) > 0),
        cell(money(overcharged), charge.charge.idempotencyKey && overcharged !== 0),
        cell(String(m.providerResponsesLost ?? 0)),
      ],
    ];
  });
}

/** The charge modes' table, when the run had one. */
export function formatChargeTable(report: TableReport): string | undefined {
  const rows = chargeRows(report);
  if (rows.length === 0) return undefined;
  return alignedTable(
    ['at the payment provider', ...CHARGE_COLUMNS],
    rows.map((cells) => cells.map(({ text, impossible }) => (impossible ? `${text} !` : text))),
  );
}

/** What was injected and what the runtime saw, per mode; printed when any of it is not zero. */
export function formatFaultTable(report: Pick<ExperimentReport, 'modes'>): string | undefined {
  const header = ['faults', ...FAULT_COLUMNS];
  const rows = faultRows(report, '-');
  const anything = rows.some((row) => row.slice(1).some((cell) => cell !== '0' && cell !== '-'));
  return anything ? alignedTable(header, rows) : undefined;
}

export function formatSummary(
  report: ExperimentReport,
  reportPath: string,
  htmlPath?: string,
  /** The terminal's columns: a wider result table folds to fit. */
  width = Number.POSITIVE_INFINITY,
): string {
  const c = report.config;
  const seconds = (report.durationMs / 1000).toFixed(1);
  const faults = formatFaultTable(report);
  const charges = formatChargeTable(report);
  return [
    `run ${report.runId} on ${report.target}: ${c.messages} messages × ${Object.keys(report.modes).length} modes, ` +
      `${c.accounts} accounts, crash rate ${c.crashRate}, seed ${c.seed}, ${seconds} s${phases(report)}`,
    ...(anyFault(c.faults) ? [`faults: ${describeFaults(c.faults)}`] : []),
    ...runtimeLine(report),
    '',
    ...redriveRunTables(report, redriveHeading(report), width),
    ...(charges ? [charges, ''] : []),
    ...producerLines(report),
    ...(faults ? [faults, ''] : []),
    ...notes(report),
    `report: ${reportPath}`,
    ...(htmlPath ? [`page:   ${htmlPath} (open it in a browser, or run with --open)`] : []),
  ].join('\n');
}

/** How the producer published, for a run through the outbox or a dual write. */
function producerLines(report: ExperimentReport): string[] {
  const p = report.producer;
  if (p === undefined) return [];
  const published = Object.values(p.published);
  const perMode = published.length > 0 ? Math.max(...published) : 0;
  return [
    `producer ${p.kind}: committed ${p.committed}, published up to ${perMode} per mode, ` +
      `never sent ${p.neverSent.length}, sent twice ${p.sentTwice.length}, ` +
      `producer kills ${p.producerCrashes}, relay kills ${p.relayCrashes}`,
    ...(p.neverSent.length > 0
      ? [
          'note: the events never sent were committed by the producer and lost before any queue saw them: ' +
            'counted as lost in every mode, and not marked, since no consumer could have applied them',
        ]
      : []),
    '',
  ];
}

/** ` (startup 2.8 s, produce 2.1 s, drain 26.7 s, verify 1.6 s)`, when the report has them. */
function phases(report: ExperimentReport): string {
  const p = report.phasesMs;
  if (p === undefined) return '';
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return ` (startup ${s(p.startup)}, produce ${s(p.produce)}, drain ${s(p.drain)}, verify ${s(p.verify)})`;
}

/**
 * Where a local run's time went inside the drain, so a slow run says why: how the environments
 * started, and how close the slowest invocation came to the function timeout.
 */
function runtimeLine(report: ExperimentReport): string[] {
  const rows = modeRows(report).filter(([, outcome]) => outcome.runtime !== undefined);
  if (rows.length === 0) return [];
  const sum = (pick: (runtime: LiveModeStats) => number) =>
    rows.reduce((total, [, outcome]) => total + (outcome.runtime ? pick(outcome.runtime) : 0), 0);
  const slowest = Math.max(...rows.map(([, outcome]) => outcome.runtime?.slowestInvocationMs ?? 0));
  const timeout = Math.min(
    ...rows.map(
      ([mode]) => report.environment?.modes[mode]?.functionTimeoutSeconds ?? Number.POSITIVE_INFINITY,
    ),
  );
  const prewarmed = sum((runtime) => runtime.prewarmed ?? 0);
  const slowestInit = Math.max(...rows.map(([, outcome]) => outcome.runtime?.slowestInitMs ?? 0));
  const workDelay = report.config.faults?.workDelayMs ?? 0;
  const limit = Number.isFinite(timeout)
    ? ` (function timeout ${timeout} s${workDelay > 0 ? ` + work delay ${(workDelay / 1000).toFixed(1)} s` : ''})`
    : '';
  return [
    `local runtime: ${prewarmed > 0 ? `${prewarmed} consumer environments prewarmed, ` : ''}` +
      `${sum((runtime) => runtime.coldStarts)} cold starts` +
      `${slowestInit > 0 ? `, slowest init ${(slowestInit / 1000).toFixed(1)} s` : ''}` +
      `, slowest invocation ${(slowest / 1000).toFixed(1)} s${limit}, ` +
      `${sum((runtime) => runtime.timeouts)} timeouts, ${sum((runtime) => runtime.visibilityOverruns)} visibility overruns`,
  ];
}

/** The fault flags of a run, as a reader would type them. */
export function describeFaults(faults: FaultSettings): string {
  const parts: string[] = [];
  if (faults.poisonRate > 0) parts.push(`poison ${faults.poisonRate}`);
  if (faults.producerDuplicateRate > 0) parts.push(`producer re-sends ${faults.producerDuplicateRate}`);
  if (faults.redeliveryRate > 0) parts.push(`redelivery ${faults.redeliveryRate}`);
  if (faults.throttleRate > 0) parts.push(`throttling ${faults.throttleRate}`);
  if (faults.workDelayMs > 0)
    parts.push(`work delay ${faults.workDelayMs} ms on ${faults.workDelayRate} of invocations`);
  if (faults.killRate > 0) parts.push(`kills ${faults.killRate}`);
  if (faults.providerLostResponseRate)
    parts.push(`provider responses lost ${faults.providerLostResponseRate}`);
  if (faults.producerCrashRate) parts.push(`producer kills ${faults.producerCrashRate}`);
  if (faults.relayCrashRate) parts.push(`relay kills ${faults.relayCrashRate}`);
  if (faults.outage)
    parts.push(
      `DynamoDB outage for ${faults.outage.forSeconds} s from ${faults.outage.afterSeconds} s after the first send`,
    );
  return parts.join(', ');
}

/** What a reader might misread in the table. */
function notes(report: ExperimentReport): string[] {
  const rows = modeRows(report);
  const outcomes = rows.map(([, outcome]) => outcome);
  const notes: string[] = [];
  if (
    report.config.crashRate > 0 &&
    outcomes.every((outcome) => outcome.crashes === 0) &&
    !anyFault(report.config.faults)
  ) {
    notes.push(
      `note: no crash was drawn for seed ${report.config.seed} at crash rate ${report.config.crashRate}, so every mode ` +
        'is exact; try another --seed or a higher --crash-rate to see the semantics differ.',
    );
  }
  for (const [mode, outcome] of rows) {
    if (!MODES[mode].promises.noLoss && outcome.poison > 0 && outcome.lost > 0) {
      notes.push(
        `note: ${mode} deletes before it validates, so the poison bodies it received are among its ${outcome.lost} lost; ` +
          'the modes that work first dead-letter them instead.',
      );
    }
    if (
      MODES[mode].promises.noDuplicates &&
      outcome.duplicated > 0 &&
      deliveredTwiceByEnvironment(mode, outcome)
    ) {
      notes.push(
        `note: ${mode}'s duplicates come from the environment, not the mode: records were delivered twice ` +
          '(producer re-sends, redeliveries or visibility overruns), and it applies each delivery it deletes; ' +
          'or a lost response made the SDK send its credit again (an UpdateItem has no idempotency token).',
      );
    }
  }
  const overruns = outcomes.reduce((sum, outcome) => sum + (outcome.runtime?.visibilityOverruns ?? 0), 0);
  if (overruns > 0) {
    notes.push(
      `note: ${overruns} batch(es) outlived their visibility timeout, so SQS may have handed the same messages to ` +
        'a second invocation: duplicates may come from the environment, not only from the mode.',
    );
  }
  const timeouts = outcomes.reduce((sum, outcome) => sum + (outcome.runtime?.timeouts ?? 0), 0);
  if (timeouts > 0) {
    notes.push(
      `note: ${timeouts} invocation(s) hit the local function timeout and were killed (the machine was slow): ` +
        'like a crash, their batches come back, so at-least-once and Powertools may count more duplicates ' +
        'than crashes, and at-most-once more losses.',
    );
  }
  const outage = report.config.faults.outage;
  const rejected = outcomes.reduce(
    (sum, outcome) => sum + (outcome.runtime?.injected.outageRejections ?? 0),
    0,
  );
  if (outage && rows.some(([, outcome]) => outcome.runtime) && rejected === 0) {
    notes.push(
      `note: no request met the DynamoDB outage: the queues were drained before it began, ${outage.afterSeconds} s ` +
        'after the first send; a lower --outage-after puts it inside the run.',
    );
  }
  const outOfOrder = rows.filter(([, outcome]) => (outcome.orderViolations ?? 0) > 0);
  if (outOfOrder.length > 0) {
    notes.push(
      `note: applied out of order within an account: ${outOfOrder.map(([mode, outcome]) => `${mode} ${outcome.orderViolations}`).join(', ')} ` +
        'event(s) applied after a later event of the same account (orderViolations in the JSON): a standard queue ' +
        'keeps no order, and a retry comes back after the events behind it.',
    );
  }
  const unseen = rows.filter(([, outcome]) => (outcome.deadLetteredUnseen ?? 0) > 0);
  if (unseen.length > 0) {
    notes.push(
      `note: in the DLQ, not seen: ${unseen.map(([mode, outcome]) => `${mode} ${outcome.deadLetteredUnseen}`).join(', ')} ` +
        "dead-lettered event(s) behind their account's first messages in a FIFO DLQ, which shows a reader only the head " +
        'of each message group without deleting it; counted after the last event of their account the verifier saw ' +
        'there, and only as far as the DLQ holds messages it did not see ' +
        '(deadLetteredUnseen in the JSON; docs/ordering.md, "Counting a FIFO DLQ").',
    );
  }
  const refused = rows.filter(([, outcome]) => (outcome.tooOldToDedupe ?? 0) > 0);
  if (refused.length > 0) {
    notes.push(
      `note: the age guard refused ${refused.map(([mode, outcome]) => `${outcome.tooOldToDedupe} in ${mode}`).join(', ')} ` +
        'of the first drain: events older than their dedupe records remember (--marker-ttl), failed into the DLQ ' +
        'instead of risking a second credit (docs/retention.md).',
    );
  }
  if (report.config.faults.throttleRate > 0) {
    notes.push(
      'note: deliveries and crashes are counters updated with UpdateItem ADD, which has no idempotency token: ' +
        'a lost response the SDK retries adds twice, so under --throttle-rate they can read high. The outcome ' +
        'counts come from event ids and do not depend on them; the runtime’s own counts are in the JSON (runtime).',
    );
  }
  if (rows.some(([mode, outcome]) => violations(mode, outcome).size > 0)) {
    notes.push(
      'note: a count marked ! is one a correct run cannot produce (an unexpected application or a payload that ' +
        'differs from the manifest, a broken promise of the mode, a ledger that does not add up): a bug, not a semantic.',
    );
  }
  return notes.length > 0 ? [...notes, ''] : [];
}

/**
 * What the progress lines' words and abbreviations mean, said once before the first of them: their
 * counts are records as the consumers saw them, not the verifier's applications.
 */
export function progressLegend(modes: readonly Mode[]): string {
  return (
    `progress, per mode (${modes.map((mode) => `${short(mode)} ${mode}`).join(', ')}): ` +
    'done = records acknowledged (the table counts events applied once), delivered = records handed to an ' +
    'invocation, redeliveries included (narrow: done/delivered); running = in invocations now; c = crashes; ' +
    'queued = visible, invisible = received, not yet deleted (narrow: q, both); ✓ drained'
  );
}

/** `at-most-once` → `AMO`: derived, so a new mode in the topology needs no edit here. */
const short = (mode: string): string =>
  mode
    .split('-')
    .map((part) => part.charAt(0).toUpperCase())
    .join('');

/**
 * One progress line, per mode: records done (acknowledged) and delivered, records in running
 * invocations, crashes, then the queue: visible and invisible (received and not deleted: running,
 * or from a crashed batch waiting out its visibility timeout); then the elapsed time. A deployed
 * target sees only the queue, not the consumers.
 */
export function formatProgress(
  snapshot: DrainSnapshot,
  options: { readonly compact?: boolean } = {},
): string {
  const entries = Object.entries(snapshot.modes) as [Mode, NonNullable<DrainSnapshot['modes'][Mode]>][];
  if (options.compact) {
    // A narrow terminal: done/delivered, crashes, and what the queue still holds.
    const parts = entries.map(
      ([mode, s]) =>
        `${short(mode)} ${s.live ? `${s.live.acknowledged}/${s.live.deliveries} c${s.live.crashes} ` : ''}q${s.visible + s.inFlight}${s.drained ? ' ✓' : ''}`,
    );
    return `${parts.join(' │ ')} │ ${(snapshot.elapsedMs / 1000).toFixed(1)} s`;
  }
  const parts = entries.map(([mode, s]) => {
    const live = s.live
      ? `done ${s.live.acknowledged}, delivered ${s.live.deliveries}, running ${s.live.inFlight}, crashes ${s.live.crashes}, `
      : '';
    return `${short(mode)} ${live}queued ${s.visible}, invisible ${s.inFlight}${s.drained ? ' ✓' : ''}`;
  });
  return `${parts.join(' │ ')} │ ${(snapshot.elapsedMs / 1000).toFixed(1)} s`;
}

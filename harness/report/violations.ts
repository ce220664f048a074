/** A mode's row as the report's tables read it, and `violations`: the counts marked `!`. */
import { MODES, type Mode } from '../../contract/topology.js';
import type { ModeOutcome } from '../../verifier/outcome.js';
import type { ModeReport } from '../run/experiment.js';

/**
 * A mode's row as the tables read it: the verifier's outcome, and what an experiment adds when it
 * has it (the local runtime's counts, the redrive). An experiment's report fits, and so does
 * `npm run redrive`'s (harness/run/redrive-run.ts).
 */
export type ModeRow = ModeOutcome & Partial<Pick<ModeReport, 'runtime' | 'redrive' | 'neverSent'>>;

/** A report as the result and redrive tables read it: its modes' rows. */
export interface TableReport {
  readonly modes: Partial<Record<Mode, ModeRow>>;
}

/** The report's modes as [mode, outcome] pairs, in report (topology) order. */
export const modeRows = (report: TableReport): [Mode, ModeRow][] =>
  Object.entries(report.modes) as [Mode, ModeRow][];

/**
 * Whether the environment itself delivered some record twice, or sent a write twice: then
 * at-most-once's duplicates are the environment's, not a broken promise (its "never twice" holds
 * per SQS delivery, and its credit is one UpdateItem, which has no idempotency token: a response
 * lost on the way back is sent again by the SDK and applied again).
 */
export function deliveredTwiceByEnvironment(mode: Mode, outcome: ModeRow): boolean {
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

/**
 * What a DLQ redrive did to a mode, from the verifier's outcome before it and after it
 * (docs/redrive.md). Every count comes from the id join's outcome counts, never from the queues'
 * approximate numbers: an event's applications only grow, so the growth of the applied events is
 * exactly the dead-lettered events the redrive got applied, and the growth of the extra
 * applications is exactly the duplicates it added.
 */
import type { ModeEventDetails } from '../../verifier/event-details.js';
import type { ModeOutcome } from '../../verifier/outcome.js';
import type { LiveModeStats } from '../environments/environment.js';

export interface RedriveCounts {
  /** Events dead-lettered (never applied) when the first drain was verified. */
  readonly deadLetteredBefore: number;
  /** Messages moved from the DLQ back to the source queue (applied-and-dead-lettered ones included). */
  readonly redriven: number;
  /** Events that were dead-lettered before the redrive and are applied after it. */
  readonly appliedAfterRedrive: number;
  /**
   * Extra applications added after the redrive (the growth of extraApplications): redriven copies
   * of events applied before, and re-applications after crashes in the second drain.
   */
  readonly duplicatedByRedrive: number;
  /** Events in the DLQ again after the second drain, never applied (counted as such, not as lost). */
  readonly deadLetteredAgain: number;
  /** Events lost after the redrive: neither applied nor in the DLQ (the redrive itself must add none). */
  readonly lost: number;
}

/** A mode's outcome as the verifier gave it, with every event's detail when the run is small enough. */
export type DetailedOutcome = ModeOutcome & { readonly events?: ModeEventDetails };

/**
 * A mode's redrive: the counts, and the verifier's whole outcome after the first drain. The mode's
 * own fields are the final state, after the redrive: a reader (and a script) sees that first.
 */
export interface ModeRedrive extends RedriveCounts {
  /** The verifier's outcome after the first drain, before the redrive, and the runtime's counts then. */
  readonly firstDrain: DetailedOutcome & { readonly runtime?: LiveModeStats };
}

/**
 * A mode's report led by the state after the redrive: the outcome fields and the detail are the
 * final verification's, the first drain's are under `redrive.firstDrain`. What the report adds
 * besides the outcome (throughput, the runtime's counts) is kept.
 */
export function leadWithFinalState<M extends DetailedOutcome & { readonly redrive?: ModeRedrive }>(
  firstDrain: M,
  after: DetailedOutcome,
  redriven: number,
): M {
  const { events: _firstEvents, ...rest } = firstDrain;
  const redrive: ModeRedrive = {
    ...redriveCounts(firstDrain, after, redriven),
    firstDrain: outcomeOnly(firstDrain),
  };
  // Every field of the outcome is replaced by the same field of the later outcome; the rest is M's.
  return { ...rest, ...after, redrive } as M;
}

/** The verifier's fields of a mode's report (its detail and the runtime's counts), without the rest. */
function outcomeOnly(report: DetailedOutcome): ModeRedrive['firstDrain'] {
  const {
    throughputPerSecond: _throughput,
    neverSent: _neverSent,
    redrive: _redrive,
    ...outcome
  } = report as ModeRedrive['firstDrain'] & Record<'throughputPerSecond' | 'neverSent' | 'redrive', unknown>;
  return outcome;
}

const applied = (outcome: ModeOutcome) => outcome.appliedOnce + outcome.duplicated;

export function redriveCounts(before: ModeOutcome, after: ModeOutcome, redriven: number): RedriveCounts {
  return {
    deadLetteredBefore: before.deadLettered,
    redriven,
    appliedAfterRedrive: applied(after) - applied(before),
    duplicatedByRedrive: after.extraApplications - before.extraApplications,
    deadLetteredAgain: after.deadLettered,
    lost: after.lost,
  };
}

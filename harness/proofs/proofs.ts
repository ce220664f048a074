import type { Mode } from '../../contract/topology.js';
import type { ModeReport } from '../experiment/experiment.js';

/** A computed verdict: `proved` decides the exit code; the text says what the ledger showed. */
export interface Verdict {
  readonly proved: boolean;
  readonly text: string;
}

/** What each mode must show after one message whose first delivery is killed at the mode's crash point. */
export const PROOFS = {
  'at-most-once': (event: string, o: ModeReport): Verdict =>
    verdict(
      'at-most-once',
      o.crashes === 1 && o.lost === 1 && o.appliedOnce === 0 && o.duplicated === 0,
      `${event} was deleted, then the process was killed, and it was never applied`,
      'the crash to land after the delete and the event to be lost',
      o,
    ),
  'at-least-once': (event: string, o: ModeReport): Verdict =>
    verdict(
      'at-least-once',
      o.crashes === 1 && o.duplicated === 1 && o.extraApplications === 1 && o.lost === 0,
      `${event} was applied, the process was killed before the acknowledgement, SQS delivered it again and it was applied a second time`,
      'the crash to land after the credit and the redelivery to credit again',
      o,
    ),
  'effectively-once': (event: string, o: ModeReport): Verdict =>
    verdict(
      'effectively-once',
      o.crashes === 1 &&
        o.appliedOnce === 1 &&
        o.duplicated === 0 &&
        o.suppressedDuplicates === 1 &&
        o.driftCents === 0,
      `${event} was applied, the process was killed before the acknowledgement, and the redelivery found the marker and was skipped`,
      'the crash to land after the transaction and the redelivery to be skipped',
      o,
    ),
  'powertools-idempotency': (event: string, o: ModeReport): Verdict =>
    verdict(
      'powertools-idempotency',
      o.crashes === 1 && o.duplicated === 1 && o.extraApplications === 1 && o.lost === 0,
      `${event} was credited, the process was killed before Powertools marked it COMPLETED, the INPROGRESS record expired with the invocation, and the redelivery credited it again`,
      'the crash to land before COMPLETED and the redelivery, after the in-progress expiry, to credit again',
      o,
    ),
} as const satisfies Record<Mode, (event: string, outcome: ModeReport) => Verdict>;

export type ProofMode = keyof typeof PROOFS;
export const PROOF_MODES = Object.keys(PROOFS) as ProofMode[];

function verdict(mode: string, proved: boolean, story: string, expected: string, o: ModeReport): Verdict {
  const counts =
    `${o.produced} produced, ${o.deliveries} deliveries, ${o.crashes} crash(es), ` +
    `${o.appliedOnce + o.duplicated} applied (${o.appliedOnce + o.duplicated + o.extraApplications} applications), ` +
    `${o.lost} lost, ${o.suppressedDuplicates} skipped as duplicates`;
  return proved
    ? { proved, text: `PROVED ${mode}: ${story} (${counts})` }
    : { proved, text: `NOT PROVED ${mode}: expected ${expected}; the ledger shows ${counts}` };
}

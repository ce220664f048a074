import {
  MODE_NAMES,
  MODES,
  type Mode,
  type ModeProof,
  type ProofCount,
  settingsOf,
} from '../../../contract/topology.js';
import type { ModeOutcome } from '../../../verifier/outcome.js';
import type { ModeReport } from '../../run/experiment.js';
import type { ProducerStats } from '../../run/outbox/produce-through.js';

/** A computed verdict: `proved` decides the exit code; the text says what the ledger showed. */
export interface Verdict {
  readonly proved: boolean;
  readonly text: string;
}

const holds = (counts: ModeProof['counts'], outcome: ModeOutcome): boolean =>
  (Object.entries(counts) as [ProofCount, number][]).every(([count, value]) => outcome[count] === value);

/**
 * What each mode must show after one message whose first delivery is killed at the mode's crash
 * point: the counts of its proof in the topology (`contract/topology.ts`), so a new mode brings its
 * proof with its entry.
 */
export function proofVerdict(mode: Mode, event: string, outcome: ModeReport): Verdict {
  const { story, expected, counts } = MODES[mode].proof;
  const shown = countsText(outcome);
  return holds(counts, outcome)
    ? { proved: true, text: `PROVED ${mode}: ${event} ${story} (${shown})` }
    : { proved: false, text: `NOT PROVED ${mode}: expected ${expected}; the ledger shows ${shown}` };
}

export const PROOFS = Object.fromEntries(
  MODE_NAMES.map((mode) => [
    mode,
    (event: string, outcome: ModeReport) => proofVerdict(mode, event, outcome),
  ]),
) as Record<Mode, (event: string, outcome: ModeReport) => Verdict>;

export type ProofMode = Mode;
export const PROOF_MODES = MODE_NAMES;

/** The modes with a redrive proof (`redriveProof` in the topology), in topology order. */
export const REDRIVE_PROOF_MODES: readonly Mode[] = MODE_NAMES.filter(
  (mode) => settingsOf(mode).redriveProof !== undefined,
);

/**
 * Before the redrive, the same in every mode: the event was applied once and its message was in the
 * DLQ (killed after the work, before the acknowledgement, at the last receive SQS allows), and the
 * redrive moved that one message back.
 */
export const BEFORE_REDRIVE = {
  counts: { crashes: 1, appliedOnce: 1, duplicated: 0, appliedAndDeadLettered: 1, lost: 0 },
  redriven: 1,
  expected:
    'the event to be applied once and dead-lettered by the crash before the redrive, and the redrive to move its one message back',
} as const satisfies {
  counts: Partial<Record<keyof ModeOutcome, number>>;
  redriven: number;
  expected: string;
};

/**
 * What a mode must show after one event applied and dead-lettered (killed before the
 * acknowledgement at its last allowed receive) and then redriven: the event as it stood before the
 * redrive (BEFORE_REDRIVE), and the counts of the mode's redrive proof after it.
 */
export function redriveProofVerdict(mode: Mode, event: string, report: ModeReport): Verdict {
  const proof = settingsOf(mode).redriveProof;
  if (!proof) throw new Error(`${mode} has no redrive proof in contract/topology.ts`);
  const name = `${mode} after a redrive`;
  const redrive = report.redrive;
  if (!redrive) return { proved: false, text: `NOT PROVED ${name}: the run has no redrive` };
  // The report leads with the state after the redrive; the first drain's is under redrive.firstDrain.
  const first = redrive.firstDrain;
  const before = (Object.entries(BEFORE_REDRIVE.counts) as [keyof ModeOutcome, number][]).every(
    ([count, value]) => first[count] === value,
  );
  const shown =
    `before the redrive: ${applied(first)} applied, ${first.appliedAndDeadLettered} dead-lettered although applied, ` +
    `${redrive.redriven} redriven; after: ${countsText(report)}, ` +
    `${report.deadLettered + report.appliedAndDeadLettered} in the DLQ`;
  if (!before || redrive.redriven !== BEFORE_REDRIVE.redriven)
    return {
      proved: false,
      text: `NOT PROVED ${name}: expected ${BEFORE_REDRIVE.expected}; the ledger shows ${shown}`,
    };
  return holds(proof.counts, report)
    ? { proved: true, text: `PROVED ${name}: ${event} ${proof.story} (${shown})` }
    : { proved: false, text: `NOT PROVED ${name}: expected ${proof.expected}; the ledger shows ${shown}` };
}

const applied = (o: ModeOutcome) => o.appliedOnce + o.duplicated;

function countsText(o: ModeOutcome): string {
  return (
    `${o.produced} produced, ${o.deliveries} deliveries, ${o.crashes} crash(es), ` +
    `${applied(o)} applied (${applied(o) + o.extraApplications} applications), ` +
    `${o.lost} lost, ${o.suppressedDuplicates} skipped as duplicates` +
    (o.charges !== undefined ? `, ${o.charges} charge(s) at the provider` : '')
  );
}

/** The producer proofs: one event through each producer, its producer or relay killed once. */
export const PRODUCER_PROOFS = {
  'dual-write': {
    consumer: 'effectively-once',
    story:
      'was committed by the producer, which was killed before it sent the event: no queue ever saw it, and it was lost',
    expected: 'the event to be committed, never sent, and lost',
    holds: (stats: ProducerStats, outcome: ModeOutcome) =>
      stats.committed === 1 && stats.neverSent.length === 1 && outcome.lost === 1 && applied(outcome) === 0,
  },
  outbox: {
    consumer: 'effectively-once',
    story:
      "was committed with its outbox item in one transaction; the relay sent it and was killed before its checkpoint, the restarted relay sent it again, and effectively-once's marker skipped the second copy: nothing lost, applied once",
    expected: 'the event to be sent twice by the relay and applied once',
    // Delivered twice by the queue, as the consumer counted it: the relay's own tally cannot see a
    // send it was killed right after.
    holds: (stats: ProducerStats, outcome: ModeOutcome) =>
      stats.relayCrashes === 1 &&
      outcome.deliveries === 2 &&
      outcome.lost === 0 &&
      outcome.appliedOnce === 1 &&
      outcome.duplicated === 0 &&
      outcome.suppressedDuplicates === 1,
  },
} as const satisfies Record<
  ProducerProof,
  {
    consumer: Mode;
    story: string;
    expected: string;
    holds: (stats: ProducerStats, outcome: ModeOutcome) => boolean;
  }
>;

export type ProducerProof = 'dual-write' | 'outbox';

export function producerProofVerdict(
  producer: ProducerProof,
  event: string,
  stats: ProducerStats,
  outcome: ModeOutcome,
): Verdict {
  const proof = PRODUCER_PROOFS[producer];
  const shown =
    `committed ${stats.committed}, never sent ${stats.neverSent.length}, sent twice ${stats.sentTwice.length}, ` +
    `producer kills ${stats.producerCrashes}, relay kills ${stats.relayCrashes}; ${proof.consumer}: ${countsText(outcome)}`;
  return proof.holds(stats, outcome)
    ? { proved: true, text: `PROVED ${producer}: ${event} ${proof.story} (${shown})` }
    : { proved: false, text: `NOT PROVED ${producer}: expected ${proof.expected}; the run shows ${shown}` };
}

import { describe, expect, it } from 'vitest';
import { MODE_NAMES, MODES } from '../../../../contract/topology.js';
import type { ModeReport } from '../../../../harness/experiment/experiment.js';
import { PROOF_MODES, proofVerdict } from '../../../../harness/proofs/proofs.js';

/** A clean one-event outcome; each test overrides what its mode's proof pins. */
function outcome(overrides: Partial<ModeReport>): ModeReport {
  return {
    produced: 1,
    poison: 0,
    producerDuplicates: 0,
    deliveries: 2,
    appliedOnce: 0,
    duplicated: 0,
    extraApplications: 0,
    deadLettered: 0,
    deadLetteredCents: 0,
    lost: 0,
    unexpected: 0,
    payloadMismatches: 0,
    conflictingReuse: 0,
    expectedCents: 100,
    actualCents: 100,
    driftCents: 0,
    ledgerCents: 100,
    consistent: true,
    crashes: 1,
    suppressedDuplicates: 0,
    retriedCancellations: 0,
    appliedAndDeadLettered: 0,
    deadLetteredUnreadable: 0,
    tooOldToDedupe: 0,
    throughputPerSecond: 1,
    ...overrides,
  };
}

describe('proofs', () => {
  it('has a proof for every mode of the topology', () => {
    expect(PROOF_MODES).toEqual(MODE_NAMES);
  });

  it.each(MODE_NAMES)('%s: the counts of its proof prove it, and each count off by one does not', (mode) => {
    const { counts } = MODES[mode].proof;
    const exact = outcome(counts);
    const proved = proofVerdict(mode, 'evt-1', exact);
    expect(proved.proved).toBe(true);
    expect(proved.text).toMatch(new RegExp(`^PROVED ${mode}: evt-1 `));
    for (const count of Object.keys(counts) as (keyof typeof counts)[]) {
      const off = proofVerdict(mode, 'evt-1', outcome({ ...counts, [count]: (counts[count] ?? 0) + 1 }));
      expect(off.proved, `${mode} with ${count} off by one`).toBe(false);
      expect(off.text).toMatch(new RegExp(`^NOT PROVED ${mode}: expected ${MODES[mode].proof.expected}`));
    }
  });

  it('tells at-most-once from at-least-once: a duplicate does not prove a loss', () => {
    const duplicate = outcome(MODES['at-least-once'].proof.counts);
    expect(proofVerdict('at-most-once', 'evt-1', duplicate).proved).toBe(false);
  });
});

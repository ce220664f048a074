import { describe, expect, it } from 'vitest';
import { MODE_NAMES, MODES, settingsOf } from '../../../../../contract/topology.js';
import type { ModeReport } from '../../../../../harness/run/experiment.js';
import { leadWithFinalState } from '../../../../../harness/run/redrive.js';
import {
  BEFORE_REDRIVE,
  PROOF_MODES,
  proofVerdict,
  REDRIVE_PROOF_MODES,
  redriveProofVerdict,
} from '../../../../../harness/studies/proofs/proofs.js';
import { modeOutcome } from '../../../../support/outcome.js';

/** A clean one-event outcome; each test overrides what its mode's proof pins. */
function outcome(overrides: Partial<ModeReport>): ModeReport {
  return {
    ...modeOutcome({
      produced: 1,
      deliveries: 2,
      appliedOnce: 0,
      expectedCents: 100,
      actualCents: 100,
      ledgerCents: 100,
      crashes: 1,
    }),
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

  describe('after a redrive', () => {
    /** The event applied once and dead-lettered, then redriven: before as BEFORE_REDRIVE, after as given. */
    function redriven(after: Partial<ModeReport>, before: Partial<ModeReport> = {}, moved = 1) {
      const first = outcome({ ...BEFORE_REDRIVE.counts, deliveries: 1, ...before });
      return leadWithFinalState(first, outcome({ deliveries: 2, ...after }), moved);
    }
    const proofOf = (mode: (typeof MODE_NAMES)[number]) => settingsOf(mode).redriveProof;

    it('is proved for the modes whose crash can leave an applied event in the DLQ', () => {
      expect(REDRIVE_PROOF_MODES).toEqual([
        'at-least-once',
        'effectively-once',
        'powertools-message-id',
        'state-upsert',
        'fifo-versioned',
      ]);
      expect(() => redriveProofVerdict('at-most-once', 'evt-1', redriven({}))).toThrow(/no redrive proof/);
    });

    it.each(REDRIVE_PROOF_MODES)(
      '%s: its counts after the redrive prove it, and each off by one does not',
      (mode) => {
        const counts = proofOf(mode)?.counts ?? {};
        const proved = redriveProofVerdict(mode, 'evt-1', redriven(counts));
        expect(proved.proved, proved.text).toBe(true);
        expect(proved.text).toMatch(
          new RegExp(
            `^PROVED ${mode} after a redrive: evt-1 .*\\(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: `,
          ),
        );
        for (const count of Object.keys(counts) as (keyof typeof counts)[]) {
          const off = redriveProofVerdict(
            mode,
            'evt-1',
            redriven({ ...counts, [count]: (counts[count] ?? 0) + 1 }),
          );
          expect(off.proved, `${mode} with ${count} off by one`).toBe(false);
          expect(off.text).toMatch(
            new RegExp(`^NOT PROVED ${mode} after a redrive: expected ${proofOf(mode)?.expected}`),
          );
        }
      },
    );

    it('is not proved when the event was not applied and dead-lettered before, or the redrive moved another number', () => {
      const counts = proofOf('effectively-once')?.counts ?? {};
      const cases = [
        redriven(counts, { appliedAndDeadLettered: 0 }),
        redriven(counts, { appliedOnce: 0, deadLettered: 1 }),
        redriven(counts, { crashes: 0 }),
        redriven(counts, {}, 0),
        redriven(counts, {}, 2),
      ];
      for (const report of cases) {
        const verdict = redriveProofVerdict('effectively-once', 'evt-1', report);
        expect(verdict.proved, verdict.text).toBe(false);
        expect(verdict.text).toMatch(
          /^NOT PROVED effectively-once after a redrive: expected the event to be applied once and dead-lettered/,
        );
      }
    });

    it('is not proved without a redrive, and not by a redriven copy killed again', () => {
      const counts = proofOf('effectively-once')?.counts ?? {};
      const { redrive: _redrive, ...noRedrive } = redriven(counts);
      expect(redriveProofVerdict('effectively-once', 'evt-1', noRedrive).text).toBe(
        'NOT PROVED effectively-once after a redrive: the run has no redrive',
      );
      const killedAgain = redriveProofVerdict(
        'effectively-once',
        'evt-1',
        redriven({ ...counts, crashes: 2, appliedAndDeadLettered: 1 }),
      );
      expect(killedAgain.proved).toBe(false);
      expect(killedAgain.text).toMatch(/2 crash\(es\), .*1 in the DLQ$/);
    });
  });
});

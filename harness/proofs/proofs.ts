import { MODE_NAMES, MODES, type Mode, type ProofCount } from '../../contract/topology.js';
import type { ModeReport } from '../experiment/experiment.js';

/** A computed verdict: `proved` decides the exit code; the text says what the ledger showed. */
export interface Verdict {
  readonly proved: boolean;
  readonly text: string;
}

/**
 * What each mode must show after one message whose first delivery is killed at the mode's crash
 * point: the counts of its proof in the topology (`contract/topology.ts`), so a new mode brings its
 * proof with its entry.
 */
export function proofVerdict(mode: Mode, event: string, outcome: ModeReport): Verdict {
  const { counts, story, expected } = MODES[mode].proof;
  const proved = (Object.entries(counts) as [ProofCount, number][]).every(
    ([count, value]) => outcome[count] === value,
  );
  return verdict(mode, proved, `${event} ${story}`, expected, outcome);
}

export const PROOFS = Object.fromEntries(
  MODE_NAMES.map((mode) => [
    mode,
    (event: string, outcome: ModeReport) => proofVerdict(mode, event, outcome),
  ]),
) as Record<Mode, (event: string, outcome: ModeReport) => Verdict>;

export type ProofMode = Mode;
export const PROOF_MODES = MODE_NAMES;

function verdict(mode: string, proved: boolean, story: string, expected: string, o: ModeReport): Verdict {
  const counts =
    `${o.produced} produced, ${o.deliveries} deliveries, ${o.crashes} crash(es), ` +
    `${o.appliedOnce + o.duplicated} applied (${o.appliedOnce + o.duplicated + o.extraApplications} applications), ` +
    `${o.lost} lost, ${o.suppressedDuplicates} skipped as duplicates`;
  return proved
    ? { proved, text: `PROVED ${mode}: ${story} (${counts})` }
    : { proved, text: `NOT PROVED ${mode}: expected ${expected}; the ledger shows ${counts}` };
}

import { chargeOf, MODES, type Mode } from '../../../contract/topology.js';
import type { ModeOutcome } from '../../../verifier/outcome.js';
import { violations } from '../../report/violations.js';

/** What a cell shows, by event id: the verifier's counts that the matrix prints. */
export interface CellCounts {
  readonly appliedOnce: number;
  readonly duplicated: number;
  readonly lost: number;
  readonly deadLettered: number;
  readonly driftCents: number;
  /** The ledger's records and its balances agree (the verifier's `consistent`). */
  readonly consistent: boolean;
  /** Charge modes: events the provider charged twice or more. */
  readonly chargedTwice?: number;
}

export function countsOf(mode: Mode, outcome: ModeOutcome): CellCounts {
  return {
    appliedOnce: outcome.appliedOnce,
    duplicated: outcome.duplicated,
    lost: outcome.lost,
    deadLettered: outcome.deadLettered,
    driftCents: outcome.driftCents,
    consistent: outcome.consistent,
    ...(chargeOf(mode) !== undefined ? { chargedTwice: outcome.doubleCharged ?? 0 } : {}),
  };
}

/** Every event applied once, nothing lost, dead-lettered or charged twice, the money exact. */
export function isExact(counts: CellCounts, events: number): boolean {
  return (
    counts.appliedOnce === events &&
    counts.duplicated === 0 &&
    counts.lost === 0 &&
    counts.deadLettered === 0 &&
    counts.driftCents === 0 &&
    counts.consistent &&
    (counts.chargedTwice ?? 0) === 0
  );
}

/**
 * The mode's promise broken in one cell, as sentences (none: it held): the counts the run's table
 * marks with `!` (report/violations.ts: what contract/topology.ts says it never does, lose or
 * duplicate, and what no correct run shows, unexpected applications, payloads unlike the manifest,
 * a ledger that does not add up), and a charge with an idempotency key taken twice.
 */
export function violationNames(mode: Mode, outcome: ModeOutcome): string[] {
  const names: Record<string, string> = {
    lost: `${outcome.lost} lost`,
    duplicated: `${outcome.duplicated} applied twice or more`,
    driftCents: `the balances drift by ${outcome.driftCents} cents`,
    unexpected: `${outcome.unexpected} applications of events never produced`,
    payloadMismatches: `${outcome.payloadMismatches} payloads unlike the manifest`,
    consistent: 'the ledger disagrees with its balances',
  };
  const broken = [...violations(mode, outcome)].map((key) => names[key] ?? String(key));
  if (chargeOf(mode)?.idempotencyKey && (outcome.doubleCharged ?? 0) > 0) {
    broken.push(`${outcome.doubleCharged} charged twice despite the idempotency key`);
  }
  return broken;
}

/** The mode's promise in words, as the matrix states it above its rows. */
export function promiseText(mode: Mode): string {
  const { noLoss, noDuplicates } = MODES[mode].promises;
  const parts = [
    noLoss ? 'no loss' : 'may lose',
    noDuplicates ? 'no duplicates' : 'may duplicate',
    ...(noLoss && noDuplicates ? ['no drift'] : []),
  ];
  if (chargeOf(mode)?.idempotencyKey) parts.push('no card charged twice');
  return `${parts.join(', ')}; and in every mode no unexpected application, no payload unlike the manifest, a ledger that agrees with its balances`;
}

import type { ModeOutcome } from '../../verifier/outcome.js';

/**
 * A verifier outcome of a clean run (10 events, each applied once, $10.00, the ledger adding up),
 * with what a test is about overridden: one place to add a field the verifier starts reporting.
 */
export function modeOutcome(overrides: Partial<ModeOutcome> = {}): ModeOutcome {
  return {
    produced: 10,
    poison: 0,
    producerDuplicates: 0,
    deliveries: 10,
    appliedOnce: 10,
    duplicated: 0,
    extraApplications: 0,
    deadLettered: 0,
    deadLetteredCents: 0,
    lost: 0,
    unexpected: 0,
    payloadMismatches: 0,
    conflictingReuse: 0,
    expectedCents: 1_000,
    actualCents: 1_000,
    driftCents: 0,
    ledgerCents: 1_000,
    consistent: true,
    crashes: 0,
    suppressedDuplicates: 0,
    retriedCancellations: 0,
    appliedAndDeadLettered: 0,
    deadLetteredUnreadable: 0,
    tooOldToDedupe: 0,
    orderViolations: 0,
    ...overrides,
  };
}

import { COUNTERS } from '../contract/ledger-keys.js';
import { refuseIfTooOld } from './shared/age-guard.js';
import { addToCounter, creditAccount } from './shared/ledger.js';
import { type ApplyMessage, workFirstMode } from './shared/work-then-acknowledge.js';

/**
 * effectively-once: the same work-then-acknowledge order as at-least-once, but the credit and a
 * processed-marker keyed on the event id are one conditional transaction. A redelivery after a
 * crash finds the marker, the transaction is cancelled with ConditionalCheckFailed, and the
 * message is skipped: delivered more than once, applied exactly once.
 */
export const applyEffectivelyOnce: ApplyMessage = async (deps, message, delivery) => {
  // Before the transaction: past its marker's expiry the condition would let a second credit through.
  await refuseIfTooOld(deps.ledger, message, {
    enabled: deps.config.ageGuard,
    retention: deps.config.retention,
  });
  const outcome = await creditAccount(deps.ledger, message, delivery, { idempotent: true });
  if (outcome === 'duplicate') {
    deps.logger.info('duplicate suppressed: event already applied', {
      eventId: message.eventId,
      messageId: delivery.messageId,
      receiveCount: delivery.receiveCount,
    });
    await addToCounter(deps.ledger, message.runId, COUNTERS.suppressedDuplicates, 1);
  }
  return outcome;
};

export const { processBatch, handler } = workFirstMode('effectively-once', applyEffectivelyOnce);

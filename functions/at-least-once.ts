import { creditAccount } from './shared/ledger.js';
import { type ApplyMessage, workFirstMode } from './shared/work-then-acknowledge.js';

/**
 * at-least-once: apply, then return so Lambda deletes the batch. A crash after the work and
 * before the acknowledgement redelivers messages that were already applied: duplicates.
 */
export const applyAtLeastOnce: ApplyMessage = (deps, message, delivery) =>
  creditAccount(deps.ledger, message, delivery, { idempotent: false });

export const { processBatch, handler } = workFirstMode('at-least-once', applyAtLeastOnce);

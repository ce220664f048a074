import { chargeMode } from './families/charge-then-record.js';

/**
 * charge-with-key: the same, with the event's id as the charge's Idempotency-Key: a redelivery or a
 * retry gets the first charge replayed by the provider, so the card is charged once
 * (docs/side-effects.md).
 */
export const consumer = chargeMode('charge-with-key');
export const { handler } = consumer;

import { chargeMode } from './families/charge-then-record.js';

/**
 * charge-no-key: charge at the payment provider without an idempotency key, then record the charge
 * in the marker transaction. The ledger is exact; the card is charged again by every redelivery
 * that follows a charge, and by every retry after a lost response (docs/side-effects.md).
 */
export const consumer = chargeMode('charge-no-key');
export const { handler } = consumer;

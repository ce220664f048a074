import { checkAge } from '@sqs-delivery-semantics/consumer-cores/age-guard';
import { TooOldToDedupeError } from '../../contract/errors.js';
import type { MessageBody } from '../../contract/message.js';
import type { Retention } from '../../contract/retention.js';
import { type Ledger, recordRefusal } from './ledger.js';

/**
 * The cores' age guard (docs/retention.md), for the consumer whose dedupe is not a core's: the
 * Powertools modes, whose records expire as a marker does. The core's check decides; the lab adds
 * the refusal to the ledger (the verifier's `tooOldToDedupe`) before the TooOldToDedupeError fails
 * the record, which then ends in the DLQ after its receives.
 */
export async function refuseIfTooOld(
  ledger: Ledger,
  message: MessageBody,
  guard: {
    readonly enabled: boolean;
    readonly retention: Pick<Retention, 'maxEventAgeSeconds' | 'marginSeconds'>;
  },
): Promise<void> {
  if (!guard.enabled) return;
  const { maxEventAgeSeconds, marginSeconds } = guard.retention;
  try {
    checkAge(message, ledger.now?.() ?? Date.now(), {
      maxAgeSeconds: maxEventAgeSeconds,
      skewSeconds: marginSeconds,
    });
  } catch (error) {
    if (error instanceof TooOldToDedupeError) await recordRefusal(ledger, message, error.ageSeconds);
    throw error;
  }
}

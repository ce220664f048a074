import { TooOldToDedupeError } from '../../contract/errors.js';
import type { MessageBody } from '../../contract/message.js';
import type { Retention } from '../../contract/retention.js';
import { type Ledger, recordRefusal } from './ledger.js';

/**
 * The age guard of the consumers that dedupe by event id (docs/retention.md): an event older than
 * its dedupe record can still remember is refused before any write. A redrive can bring a message
 * back at any age (a new message, its retention started over), and a marker past its expiry no
 * longer makes the redelivery a duplicate: without the guard an already-applied event would be
 * applied again. The producer's `createdAt` is the event's age, whatever its SQS message's.
 *
 * A `createdAt` further in the future than the margin is refused too: its age would be understated
 * for as long as the clock that stamped it runs ahead, and the guard would accept it past its
 * marker's expiry.
 *
 * Records the refusal in the ledger (the verifier's `tooOldToDedupe`), then throws
 * TooOldToDedupeError so the record fails and, after its receives, ends in the DLQ.
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
  const now = ledger.now?.() ?? Date.now();
  const ageMs = now - Date.parse(message.createdAt);
  const { maxEventAgeSeconds, marginSeconds } = guard.retention;
  if (ageMs <= maxEventAgeSeconds * 1000 && ageMs >= -marginSeconds * 1000) return;
  const ageSeconds = Math.round(ageMs / 1000);
  await recordRefusal(ledger, message, ageSeconds);
  throw new TooOldToDedupeError(message.eventId, ageSeconds, maxEventAgeSeconds);
}

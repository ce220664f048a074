import { COUNTERS } from '../contract/ledger-keys.js';
import { InvalidMessageError } from './shared/errors.js';
import { upsertEventRecord } from './shared/event-record.js';
import { addToCounter, type CreditOutcome } from './shared/ledger.js';
import { writeState } from './shared/one-write-credits.js';
import { type ApplyMessage, workFirstMode } from './shared/work-then-acknowledge.js';

/**
 * state-upsert: the event carries the account's balance after it (`balanceAfterCents`) and its
 * position in the account's stream (`seq`). The business write is ONE conditional UpdateItem on the
 * balance item: `SET balanceCents = :b, version = :seq` only if the stored version is older. A
 * repeat finds its own version and writes nothing; an event that arrives after a later one finds a
 * newer version and writes nothing either: its state is superseded, and already contained in the
 * newer one (the balance after a later event includes every earlier amount). Duplicates and
 * reordering are harmless by nature; the final balance is exact once each account's last event is
 * written, while intermediate states may be skipped.
 *
 * Then, for the verifier only (the production shape is the first write alone), one record per
 * event keyed on the event id (`APP#<eventId>`, `applications` always 1, `writes` counting the
 * deliveries that wrote it), carrying the seq and the state, and whether the state was written or
 * superseded. It comes second, so it attests a state write (or a newer state) that is durable: a
 * failure between the two writes leaves the record missing, and the redelivery writes it.
 */
export const applyStateUpsert: ApplyMessage = async (deps, message, delivery): Promise<CreditOutcome> => {
  const balanceAfterCents = message.balanceAfterCents;
  if (balanceAfterCents === undefined) {
    throw new InvalidMessageError('balanceAfterCents', 'is required by state-upsert (a state event)');
  }
  const now = deps.ledger.now?.() ?? Date.now();
  const written = await writeState(deps, message, balanceAfterCents, now);
  const outcome = await upsertEventRecord(deps, message, delivery, now, {
    set: { seq: message.seq, balanceAfterCents },
    setOnce: { stateOutcome: written === 'superseded' ? 'superseded' : 'written' },
  });
  // Counted once per event: on the delivery that first recorded it.
  if (outcome === 'applied' && written === 'superseded') {
    await addToCounter(deps.ledger, message.runId, COUNTERS.superseded, 1);
  }
  return outcome;
};

export const { processBatch, handler } = workFirstMode('state-upsert', applyStateUpsert);

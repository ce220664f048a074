import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { balanceKey, COUNTERS, partitionKey, TTL_ATTRIBUTE } from '../contract/ledger-keys.js';
import type { ConsumerDeps } from './shared/consumer.js';
import { InvalidMessageError } from './shared/errors.js';
import { storedVersionOf, upsertEventRecord } from './shared/event-record.js';
import { addToCounter, type CreditOutcome, expiresAt, singleWriteError } from './shared/ledger.js';
import type { MessageBody } from './shared/message.js';
import { type ApplyMessage, workFirstMode } from './shared/work-then-acknowledge.js';

/** The condition of the state write: the stored state is older than the event's, or there is none. */
export const STATE_CONDITION = 'attribute_not_exists(version) OR version < :seq';

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
  const pk = partitionKey(message.runId, deps.ledger.mode);
  const written = await writeState(deps, message, balanceAfterCents, pk, now);
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

/**
 * The one business write. 'written': the state is the event's; 'own': the stored version is the
 * event's own (a delivery wrote it before its record); 'superseded': a newer state is stored.
 */
async function writeState(
  deps: ConsumerDeps,
  message: MessageBody,
  balanceAfterCents: number,
  pk: string,
  now: number,
): Promise<'written' | 'own' | 'superseded'> {
  try {
    await deps.ledger.ddb.send(
      new UpdateCommand({
        TableName: deps.ledger.tableName,
        Key: { pk, sk: balanceKey(message.accountId) },
        UpdateExpression: 'SET balanceCents = :b, version = :seq, #ttl = :ttl',
        ConditionExpression: STATE_CONDITION,
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':b': balanceAfterCents,
          ':seq': message.seq,
          ':ttl': expiresAt(deps.ledger, now),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'written';
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') {
      const stored = storedVersionOf(error);
      return stored === message.seq ? 'own' : 'superseded';
    }
    throw singleWriteError(error, message.eventId);
  }
}

export const { processBatch, handler } = workFirstMode('state-upsert', applyStateUpsert);

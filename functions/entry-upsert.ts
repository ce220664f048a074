import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { COUNTERS, markerKey, partitionKey, TTL_ATTRIBUTE } from '../contract/ledger-keys.js';
import { addToCounter, type CreditOutcome, expiresAt, singleWriteError } from './shared/ledger.js';
import { payloadHash } from './shared/message.js';
import { type ApplyMessage, workFirstMode } from './shared/work-then-acknowledge.js';

/**
 * entry-upsert: no balance item to add to. Each event writes its own ledger entry, keyed on the
 * event id, with one unconditional UpdateItem that SETs the entry's fields: a redelivery writes
 * the same item again, and nothing changes but its `writes` count. The balance is derived on read,
 * the sum of an account's entries ("upsert by a unique key", "dedupe on read"): exact at one write,
 * in any order, with the price moved to whoever reads a balance.
 *
 * The entry is the verifier's application record too (`APP#<eventId>`, `applications` always 1),
 * so a repeat can never read as a duplicate; `writes` shows how many deliveries wrote it.
 */
export const applyEntryUpsert: ApplyMessage = async (deps, message, delivery): Promise<CreditOutcome> => {
  const now = deps.ledger.now?.() ?? Date.now();
  try {
    const { Attributes } = await deps.ledger.ddb.send(
      new UpdateCommand({
        TableName: deps.ledger.tableName,
        Key: { pk: partitionKey(message.runId, deps.ledger.mode), sk: markerKey(message.eventId) },
        UpdateExpression:
          'SET eventId = :event, accountId = :account, amountCents = :amount, payloadHash = :hash, ' +
          'applications = :one, appliedAt = if_not_exists(appliedAt, :at), receiveCount = if_not_exists(receiveCount, :receive), ' +
          '#ttl = :ttl ADD writes :one',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':event': message.eventId,
          ':account': message.accountId,
          ':amount': message.amountCents,
          ':hash': payloadHash(message),
          ':one': 1,
          ':at': new Date(now).toISOString(),
          ':receive': delivery.receiveCount,
          ':ttl': expiresAt(deps.ledger, now),
        },
        // A reused event id with another account or amount must not overwrite the first entry.
        ConditionExpression: 'attribute_not_exists(pk) OR payloadHash = :hash',
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    // An entry that was there already: this delivery repeated a write, harmlessly.
    if (Attributes?.writes !== undefined) {
      await addToCounter(deps.ledger, message.runId, COUNTERS.suppressedDuplicates, 1);
      return 'duplicate';
    }
    return 'applied';
  } catch (error) {
    throw singleWriteError(error, message.eventId);
  }
};

export const { processBatch, handler } = workFirstMode('entry-upsert', applyEntryUpsert);

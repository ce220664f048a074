import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  COUNTERS,
  type Delivery,
  markerKey,
  partitionKey,
  TTL_ATTRIBUTE,
} from '../../contract/ledger-keys.js';
import { type MessageBody, payloadHash } from '../../contract/message.js';
import type { ConsumerDeps } from './consumer.js';
import { addToCounter, type CreditOutcome, expiresAt, singleWriteError } from './ledger.js';

/** Attributes an event's record carries beyond the common ones: set on every write, or on the first only. */
export interface RecordFields {
  readonly set?: Readonly<Record<string, string | number>>;
  readonly setOnce?: Readonly<Record<string, string | number>>;
}

/**
 * Writes the one item per event that a one-write mode keeps (entry-upsert's entry; state-upsert's
 * record for the verifier): `APP#<eventId>`, `applications` always 1, `writes`
 * counting the deliveries that wrote it. One unconditional-by-design UpdateItem: a repeat writes
 * the same item again, so a duplicate delivery can never read as a second application; it is
 * counted as a suppressed duplicate instead. The condition refuses only a reused event id with
 * another account or amount, which must not overwrite the first.
 */
export async function upsertEventRecord(
  deps: ConsumerDeps,
  message: MessageBody,
  delivery: Delivery,
  now: number,
  fields: RecordFields = {},
): Promise<CreditOutcome> {
  const names: Record<string, string> = { '#ttl': TTL_ATTRIBUTE };
  const values: Record<string, string | number> = {
    ':event': message.eventId,
    ':account': message.accountId,
    ':amount': message.amountCents,
    ':hash': payloadHash(message),
    ':one': 1,
    ':at': new Date(now).toISOString(),
    ':receive': delivery.receiveCount,
    ':ttl': expiresAt(deps.ledger, now),
  };
  const assignments = [
    'eventId = :event',
    'accountId = :account',
    'amountCents = :amount',
    'payloadHash = :hash',
    'applications = :one',
    'appliedAt = if_not_exists(appliedAt, :at)',
    'receiveCount = if_not_exists(receiveCount, :receive)',
    '#ttl = :ttl',
  ];
  for (const [once, entries] of [
    [false, fields.set],
    [true, fields.setOnce],
  ] as const) {
    for (const [name, value] of Object.entries(entries ?? {})) {
      names[`#${name}`] = name;
      values[`:${name}`] = value;
      assignments.push(once ? `#${name} = if_not_exists(#${name}, :${name})` : `#${name} = :${name}`);
    }
  }
  try {
    const { Attributes } = await deps.ledger.ddb.send(
      new UpdateCommand({
        TableName: deps.ledger.tableName,
        Key: { pk: partitionKey(message.runId, deps.ledger.mode), sk: markerKey(message.eventId) },
        UpdateExpression: `SET ${assignments.join(', ')} ADD writes :one`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ConditionExpression: 'attribute_not_exists(pk) OR payloadHash = :hash',
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    // The item was there already: this delivery repeated the event, harmlessly.
    if (Attributes?.writes !== undefined) {
      await addToCounter(deps.ledger, message.runId, COUNTERS.suppressedDuplicates, 1);
      return 'duplicate';
    }
    return 'applied';
  } catch (error) {
    throw singleWriteError(error, message.eventId);
  }
}

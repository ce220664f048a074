/**
 * The one business write of each one-write mode, apart from its handler module (which reads its
 * Lambda configuration at import): the handlers call these, and the bench prices them alone, as
 * their production shape (harness/benchmarks/production-shape.ts).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { balanceKey, partitionKey, TTL_ATTRIBUTE } from '../../contract/ledger-keys.js';
import type { ConsumerDeps } from './consumer.js';
import { SequenceGapError } from './errors.js';
import { expiresAt, singleWriteError } from './ledger.js';
import type { MessageBody } from './message.js';

// state-upsert

/** The condition of the state write: the stored state is older than the event's, or there is none. */
export const STATE_CONDITION = 'attribute_not_exists(version) OR version < :seq';

/**
 * The one business write. 'written': the state is the event's; 'own': the stored version is the
 * event's own (a delivery wrote it before its record); 'superseded': a newer state is stored.
 */
export async function writeState(
  deps: ConsumerDeps,
  message: MessageBody,
  balanceAfterCents: number,
  now: number,
): Promise<'written' | 'own' | 'superseded'> {
  try {
    await deps.ledger.ddb.send(
      new UpdateCommand({
        TableName: deps.ledger.tableName,
        Key: { pk: partitionKey(message.runId, deps.ledger.mode), sk: balanceKey(message.accountId) },
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

// fifo-versioned

/** The condition of the credit: the account is exactly one position behind the event. */
export const NEXT_IN_ORDER = 'version = :previous';
/** The first event of an account: no version stored yet. */
export const FIRST_OF_ACCOUNT = 'attribute_not_exists(version)';

/** The one business write: 'credited', or 'repeat' when the version shows the event is in already. */
export async function creditInOrder(
  deps: ConsumerDeps,
  message: MessageBody,
  now: number,
): Promise<'credited' | 'repeat'> {
  const first = message.seq === 1;
  try {
    await deps.ledger.ddb.send(
      new UpdateCommand({
        TableName: deps.ledger.tableName,
        Key: { pk: partitionKey(message.runId, deps.ledger.mode), sk: balanceKey(message.accountId) },
        UpdateExpression: 'ADD balanceCents :amount SET version = :seq, #ttl = :ttl',
        ConditionExpression: first ? FIRST_OF_ACCOUNT : NEXT_IN_ORDER,
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':amount': message.amountCents,
          ':seq': message.seq,
          ':ttl': expiresAt(deps.ledger, now),
          ...(first ? {} : { ':previous': message.seq - 1 }),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'credited';
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') {
      const stored = storedVersionOf(error) ?? 0;
      if (message.seq <= stored) return 'repeat';
      throw new SequenceGapError(message.eventId, message.seq, stored);
    }
    throw singleWriteError(error, message.eventId);
  }
}

/** The stored `version` in a ConditionalCheckFailed's item (ALL_OLD), marshalled ({ N: '3' }) or not. */
export function storedVersionOf(error: unknown): number | undefined {
  const value = (error as { Item?: Record<string, unknown> } | undefined)?.Item?.version;
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && 'N' in value) return Number(value.N);
  return undefined;
}

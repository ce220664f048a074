import { ChangeMessageVisibilityBatchCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { balanceKey, gapKey, partitionKey, TTL_ATTRIBUTE } from '../contract/ledger-keys.js';
import { chunks } from './shared/chunks.js';
import { readConsumerConfig, requireEnv } from './shared/config.js';
import { type ConsumerDeps, createConsumerDeps } from './shared/consumer.js';
import { describeError, SequenceGapError } from './shared/errors.js';
import { storedVersionOf, upsertEventRecord } from './shared/event-record.js';
import { type CreditOutcome, expiresAt, singleWriteError } from './shared/ledger.js';
import type { MessageBody } from './shared/message.js';
import { type ApplyMessage, workThenAcknowledge } from './shared/work-then-acknowledge.js';

/** The condition of the credit: the account is exactly one position behind the event. */
export const NEXT_IN_ORDER = 'version = :previous';
/** The first event of an account: no version stored yet. */
export const FIRST_OF_ACCOUNT = 'attribute_not_exists(version)';

/**
 * fifo-versioned: a FIFO queue delivers an account's events in order (one message group per
 * account), and each event carries its position in the account's stream (`seq`). The credit is ONE
 * conditional UpdateItem on the balance item: `ADD balanceCents :amount SET version = :seq`, only if
 * the stored version is seq − 1. So the version says which events are in the balance, and the
 * condition makes the delta safe to apply twice without a marker:
 * - a repeat (a redelivery, a redriven copy) finds its own seq or a later one stored: nothing is
 *   written, and the event counts as a suppressed duplicate;
 * - a gap (the stored version below seq − 1: the predecessor is not applied) throws
 *   SequenceGapError; the record fails, and with it every later record of the batch (the FIFO
 *   rule), so the account waits for its predecessor.
 *
 * Then, for the verifier only (the production shape is the credit alone), the event's record
 * (`APP#<eventId>`, applications 1). It comes second, so it attests a durable credit: a failure
 * between the two leaves the record missing, and the redelivery, finding its own version, writes it.
 */
export const applyFifoVersioned: ApplyMessage = async (deps, message, delivery): Promise<CreditOutcome> => {
  const now = deps.ledger.now?.() ?? Date.now();
  await creditInOrder(deps, message, now);
  return upsertEventRecord(deps, message, delivery, now, { set: { seq: message.seq } });
};

/** The one business write: 'credited', or 'repeat' when the version shows the event is in already. */
async function creditInOrder(
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
      await recordGap(deps, message, stored, now);
      throw new SequenceGapError(message.eventId, message.seq, stored);
    }
    throw singleWriteError(error, message.eventId);
  }
}

/**
 * One invocation: the work-first loop with the FIFO rule, then, if a record hit a gap, every failed
 * record is made visible again at once (ChangeMessageVisibility 0) instead of after the visibility
 * timeout. On a FIFO queue a gap means the predecessor was dead-lettered (SQS holds a group back
 * while any of its messages is in flight, so it cannot still be on its way): retrying later cannot
 * fill it. Released at once, the record uses up its receives in seconds and SQS moves it to the DLQ
 * behind its predecessor, in order, instead of blocking the account for max receive count ×
 * visibility timeout per event (docs/ordering.md, "The gap policy").
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
  queueUrl: string,
): Promise<SQSBatchResponse> {
  const gapGroups = new Set<string>();
  const apply: ApplyMessage = async (batchDeps, message, delivery) => {
    try {
      return await applyFifoVersioned(batchDeps, message, delivery);
    } catch (error) {
      if (error instanceof SequenceGapError) gapGroups.add(message.accountId);
      throw error;
    }
  };
  const response = await workThenAcknowledge(event, context, deps, apply, true);
  if (gapGroups.size > 0) await releaseFailed(deps, queueUrl, event, response, gapGroups);
  return response;
}

/**
 * Evidence of a gap, one item per account (`GAP#<accountId>`, counting refusals): the version the
 * account was blocked at. The verifier counts every later event of the account that was neither
 * applied nor seen in the DLQ as dead-lettered behind its predecessor, as a FIFO DLQ does not let a
 * reader see past a group's first batch without deleting it. Only on the gap path: the credit's
 * happy path stays one write.
 */
async function recordGap(deps: ConsumerDeps, message: MessageBody, storedVersion: number, now: number) {
  await deps.ledger.ddb.send(
    new UpdateCommand({
      TableName: deps.ledger.tableName,
      Key: { pk: partitionKey(message.runId, deps.ledger.mode), sk: gapKey(message.accountId) },
      UpdateExpression:
        'ADD refusals :one SET accountId = :account, blockedAt = if_not_exists(blockedAt, :stored), lastEventId = :event, #ttl = :ttl',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: {
        ':one': 1,
        ':account': message.accountId,
        ':stored': storedVersion,
        ':event': message.eventId,
        ':ttl': expiresAt(deps.ledger, now),
      },
    }),
  );
}

/**
 * Makes the failed records of the blocked groups visible now. Best effort: one that stays invisible
 * comes back after its visibility timeout.
 */
async function releaseFailed(
  deps: ConsumerDeps,
  queueUrl: string,
  event: SQSEvent,
  response: SQSBatchResponse,
  groups: ReadonlySet<string>,
): Promise<void> {
  const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
  const records = event.Records.filter(
    (record) => failed.has(record.messageId) && groups.has(record.attributes.MessageGroupId ?? ''),
  );
  for (const chunk of chunks(records, 10)) {
    try {
      await deps.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((record, index) => ({
            Id: String(index),
            ReceiptHandle: record.receiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      );
    } catch (error) {
      deps.logger.warn(
        'could not release the records after a gap; they come back after the visibility timeout',
        {
          error: describeError(error),
        },
      );
    }
  }
}

const queueUrl = requireEnv('QUEUE_URL');
const deps = createConsumerDeps(readConsumerConfig('fifo-versioned'));

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  deps.logger.addContext(context);
  return processBatch(event, context, deps, queueUrl);
};

import { ChangeMessageVisibilityBatchCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { chunks } from './shared/chunks.js';
import { readConsumerConfig, requireEnv } from './shared/config.js';
import { type ConsumerDeps, createConsumerDeps } from './shared/consumer.js';
import { describeError, SequenceGapError } from './shared/errors.js';
import { upsertEventRecord } from './shared/event-record.js';
import type { CreditOutcome } from './shared/ledger.js';
import { creditInOrder } from './shared/one-write-credits.js';
import { type ApplyMessage, workThenAcknowledge } from './shared/work-then-acknowledge.js';

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

/**
 * One invocation: the work-first loop with the FIFO rule, then, if a record hit a gap, every failed
 * record is made visible again at once (ChangeMessageVisibility 0) instead of after the visibility
 * timeout. On a FIFO queue a gap means the predecessor was dead-lettered (SQS holds a group back
 * while any of its messages is in flight, so it cannot still be on its way): retrying later cannot
 * fill it. Released at once, the record uses up its receives in seconds and SQS moves it to the DLQ
 * behind its predecessor, in order, instead of blocking the account for max receive count ×
 * visibility timeout per batch (docs/ordering.md, "The gap policy").
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
  queueUrl: string,
): Promise<SQSBatchResponse> {
  const gapRecords = new Set<string>();
  const apply: ApplyMessage = async (batchDeps, message, delivery) => {
    try {
      return await applyFifoVersioned(batchDeps, message, delivery);
    } catch (error) {
      if (error instanceof SequenceGapError) gapRecords.add(delivery.messageId);
      throw error;
    }
  };
  const response = await workThenAcknowledge(event, context, deps, apply);
  // The groups of the records that hit a gap: whatever the producer names its groups.
  const gapGroups = new Set(
    event.Records.filter((record) => gapRecords.has(record.messageId)).map(
      (record) => record.attributes.MessageGroupId ?? '',
    ),
  );
  if (gapGroups.size > 0) await releaseFailed(deps, queueUrl, event, response, gapGroups);
  return response;
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
      const { Failed = [] } = await deps.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((record, index) => ({
            Id: String(index),
            ReceiptHandle: record.receiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      );
      if (Failed.length > 0) {
        deps.logger.warn(
          'some records were not released after a gap; they come back after the visibility timeout',
          {
            failed: Failed.map((entry) => `${chunk[Number(entry.Id)]?.messageId}: ${entry.Code}`),
          },
        );
      }
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

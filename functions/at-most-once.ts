import { DeleteMessageBatchCommand, type DeleteMessageBatchCommandOutput } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { readConsumerConfig, requireEnv } from './shared/config.js';
import {
  type ConsumerDeps,
  countDeliveries,
  createConsumerDeps,
  deliveryOf,
  logRecordFailure,
} from './shared/consumer.js';
import { DeleteFailedError, describeError } from './shared/errors.js';
import { creditAccount } from './shared/ledger.js';
import { parseMessageBody, receiveCountOf, runIdOf } from './shared/message.js';

/**
 * at-most-once: delete the received batch from SQS first, then apply each message. Nothing is
 * ever applied twice, but a crash (or a failed write) after the delete loses the messages not yet
 * applied: SQS no longer has them and nobody will retry them.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
  queueUrl: string,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const { deleted, notDeleted } = await deleteBatch(deps, queueUrl, event.Records);

  for (const record of deleted) {
    const position = event.Records.indexOf(record);
    const message = tryParse(record);
    await deps.crash.maybeCrash({
      runId: message?.runId ?? runIdOf(record),
      key: message?.eventId ?? record.messageId,
      receiveCount: receiveCountOf(record),
      where: 'after the batch was deleted, before applying the message',
    });
    try {
      await creditAccount(
        deps.ledger,
        message ?? parseMessageBody(record.body),
        deliveryOf(record, context, position),
        {
          idempotent: false,
        },
      );
    } catch (error) {
      logRecordFailure(
        deps,
        record,
        error,
        'LOST: at-most-once deleted it before the work, nothing will retry it',
      );
    }
  }

  // Failing the invocation makes Lambda keep the undeleted records, so SQS redelivers them; the
  // ones deleted above are gone either way. Partial batch responses are off for this mode.
  if (notDeleted.length > 0) throw new DeleteFailedError(notDeleted.map((record) => record.messageId));
  return { batchItemFailures: [] };
}

function tryParse(record: SQSRecord) {
  try {
    return parseMessageBody(record.body);
  } catch {
    return undefined; // applying it below fails again and logs the field that is wrong
  }
}

/** DeleteMessageBatch takes at most 10 entries per call. */
const DELETE_BATCH_LIMIT = 10;

/** Deletes the records from the queue; a record SQS did not delete is neither applied nor lost. */
export async function deleteBatch(
  deps: ConsumerDeps,
  queueUrl: string,
  records: readonly SQSRecord[],
): Promise<{ deleted: SQSRecord[]; notDeleted: SQSRecord[] }> {
  const deleted: SQSRecord[] = [];
  const notDeleted: SQSRecord[] = [];
  for (let start = 0; start < records.length; start += DELETE_BATCH_LIMIT) {
    const chunk = records.slice(start, start + DELETE_BATCH_LIMIT);
    let result: DeleteMessageBatchCommandOutput;
    try {
      result = await deps.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
        }),
      );
    } catch (error) {
      // This chunk may or may not be deleted; treat it as not deleted (never applied here, so never
      // applied twice) and keep going, so the chunks already deleted are still applied.
      deps.logger.warn(
        'DeleteMessageBatch failed: not applied; redelivered, or lost if the delete took effect',
        {
          messageIds: chunk.map((record) => record.messageId),
          error: describeError(error),
        },
      );
      notDeleted.push(...chunk);
      continue;
    }
    const failedIds = new Set((result.Failed ?? []).map((entry) => entry.Id));
    for (const [index, record] of chunk.entries()) {
      if (failedIds.has(String(index))) {
        deps.logger.warn('SQS did not delete the message; it will be redelivered', {
          messageId: record.messageId,
          failure: result.Failed?.find((entry) => entry.Id === String(index)),
        });
        notDeleted.push(record);
      } else {
        deleted.push(record);
      }
    }
  }
  return { deleted, notDeleted };
}

const queueUrl = requireEnv('QUEUE_URL');
const deps = createConsumerDeps(readConsumerConfig('at-most-once'));

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  deps.logger.addContext(context);
  return processBatch(event, context, deps, queueUrl);
};

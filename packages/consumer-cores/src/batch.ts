import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { ConsumerLogger } from './logger.js';
import { describeError } from './logger.js';

/**
 * The loop every work-first core shares: each record is processed in order, then the handler
 * returns the records that failed in `batchItemFailures`, and the event source mapping deletes the
 * rest. It needs ReportBatchItemFailures on the mapping; without it a returned failure deletes the
 * whole batch. A process that dies before the return deletes nothing, so every record of the batch
 * comes back: what a core does on a redelivery decides whether that duplicates.
 *
 * On a FIFO queue (its ARN ends in `.fifo`) a failure ends its message group's part of the batch: the failed record
 * and every later record of its group are reported, none applied, since applying one would put it
 * before the failed one, which comes back first. Other groups go on, as Powertools'
 * SqsFifoPartialProcessor does with `skipGroupOnError`.
 */
export async function processInOrder(
  records: readonly SQSRecord[],
  processRecord: (record: SQSRecord) => Promise<void>,
  logger: ConsumerLogger,
): Promise<SQSBatchResponse> {
  const fifo = records.some(isFifoRecord);
  const failed: string[] = [];
  const failedGroups = new Set<string>();
  for (const record of records) {
    // A FIFO record always has its group; without one, the whole batch is one group.
    const group = record.attributes.MessageGroupId ?? '';
    if (fifo && failedGroups.has(group)) {
      failed.push(record.messageId);
      continue;
    }
    try {
      await processRecord(record);
    } catch (error) {
      logger.error('record not applied: reported in batchItemFailures, SQS delivers it again', {
        messageId: record.messageId,
        receiveCount: record.attributes.ApproximateReceiveCount,
        error: describeError(error),
        ...(error instanceof Error && 'field' in error ? { field: error.field } : {}),
      });
      failed.push(record.messageId);
      if (fifo) failedGroups.add(group);
    }
  }
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
}

/** True for a record from a FIFO queue: its event source ARN ends in `.fifo`. */
export const isFifoRecord = (record: SQSRecord): boolean => record.eventSourceARN.endsWith('.fifo');

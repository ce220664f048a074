import { DeleteMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { describeError } from './logger.js';

export interface DeleteOutcome {
  /** Positions (in the given records) that SQS deleted. */
  readonly deleted: number[];
  /** Positions SQS did not delete, or may not have: the call failed or listed the entry as failed. */
  readonly notDeleted: { readonly position: number; readonly reason: string }[];
}

/**
 * Deletes received records with DeleteMessageBatch (10 per call), checking each entry: the call
 * answers 200 even when entries failed. A call that throws leaves its whole chunk "not deleted"
 * and the others go on. The lab's local event source mapping acknowledges the same way Lambda does.
 */
export async function deleteRecords(
  sqs: SQSClient,
  queueUrl: string,
  records: readonly SQSRecord[],
): Promise<DeleteOutcome> {
  const deleted: number[] = [];
  const notDeleted: { position: number; reason: string }[] = [];
  for (let start = 0; start < records.length; start += 10) {
    const chunk = records
      .slice(start, start + 10)
      .map((record, index) => ({ record, position: start + index }));
    try {
      const { Failed = [] } = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map(({ record, position }) => ({
            Id: String(position),
            ReceiptHandle: record.receiptHandle,
          })),
        }),
      );
      const failures = new Map(Failed.map((entry) => [entry.Id, `${entry.Code}: ${entry.Message ?? ''}`]));
      for (const { position } of chunk) {
        const reason = failures.get(String(position));
        if (reason === undefined) deleted.push(position);
        else notDeleted.push({ position, reason });
      }
    } catch (error) {
      for (const { position } of chunk) notDeleted.push({ position, reason: describeError(error) });
    }
  }
  return { deleted, notDeleted };
}

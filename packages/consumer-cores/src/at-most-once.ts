import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { deleteRecords } from './delete-records.js';
import { ConsumerError } from './errors.js';
import { type ConsumerEvent, type ParseEvent, parseEvent } from './event.js';
import { type ConsumerLogger, describeError, jsonLogger } from './logger.js';

export interface AtMostOnceOptions<E extends ConsumerEvent> {
  readonly sqs: SQSClient;
  /** The queue the mapping reads: the handler deletes from it itself. */
  readonly queueUrl: string;
  readonly work: (event: NoInfer<E>, record: SQSRecord) => Promise<void>;
  /** @default {@link parseEvent} */
  readonly parse?: ParseEvent<E>;
  /** @default JSON lines on the console */
  readonly logger?: ConsumerLogger;
}

/** Some records could not be deleted: the invocation fails so that SQS delivers them again. */
export class DeleteFailedError extends ConsumerError {
  override readonly name = 'DeleteFailedError';
  constructor(readonly messageIds: readonly string[]) {
    super(`${messageIds.length} record(s) not deleted, so not applied: ${messageIds.join(', ')}`);
  }
}

/**
 * THE PATTERN TO AVOID, kept to show what it costs. It deletes the batch from SQS first, then works:
 * a crash (or a failed write) after the delete loses every record not yet applied, since SQS no
 * longer has them and nothing retries them. Nor does it apply each event at most once: SQS can
 * deliver a message again after it was deleted (a stale receipt handle deletes nothing, yet
 * succeeds), a re-send is a new message, and a write the SDK retries after its response was lost
 * is applied twice: give `work` a client with `maxAttempts: 1` if it must not repeat. Turn
 * ReportBatchItemFailures off for it.
 *
 * @example
 * ```ts
 * export const handler = createAtMostOnceHandler({ sqs: new SQSClient({}), queueUrl, work });
 * ```
 */
export function createAtMostOnceHandler<E extends ConsumerEvent = ConsumerEvent>(
  options: AtMostOnceOptions<E>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const parse = options.parse ?? (parseEvent as ParseEvent<E>);
  const logger = options.logger ?? jsonLogger;
  return async (event) => {
    const { deleted, notDeleted } = await deleteRecords(options.sqs, options.queueUrl, event.Records);
    for (const { position, reason } of notDeleted) {
      logger.warn('not deleted, so not applied', { messageId: event.Records[position]?.messageId, reason });
    }
    for (const position of deleted) {
      const record = event.Records[position];
      if (record === undefined) continue;
      try {
        await options.work(await parse(record.body, record), record);
      } catch (error) {
        logger.error('record LOST: deleted before the work, nothing will retry it', {
          messageId: record.messageId,
          error: describeError(error),
        });
      }
    }
    // Failing the invocation keeps the undeleted records in SQS; the deleted ones are gone either way.
    if (notDeleted.length > 0) {
      throw new DeleteFailedError(notDeleted.map(({ position }) => event.Records[position]?.messageId ?? ''));
    }
    return { batchItemFailures: [] };
  };
}

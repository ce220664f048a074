import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { processInOrder } from './batch.js';
import { type ConsumerEvent, type ParseEvent, parseEvent } from './event.js';
import { type ConsumerLogger, jsonLogger } from './logger.js';

export interface AtLeastOnceOptions<E extends ConsumerEvent> {
  /** The team's work for one event. Throw to have the record delivered again. */
  readonly work: (event: NoInfer<E>, record: SQSRecord) => Promise<void>;
  /** @default {@link parseEvent} */
  readonly parse?: ParseEvent<E>;
  /** @default JSON lines on the console */
  readonly logger?: ConsumerLogger;
}

/**
 * An SQS handler that works first and acknowledges after: each record's `work`, then the failed
 * records in `batchItemFailures`, then the event source mapping deletes the rest. Nothing is lost:
 * a record is deleted only after its work returned. But a crash after the work and before the
 * acknowledgement (a timeout, an out-of-memory kill, a lost delete) delivers the record again, and
 * the work runs twice. Use it as is only for work that is harmless to repeat; otherwise see
 * createEffectivelyOnceHandler. Needs ReportBatchItemFailures on the mapping.
 *
 * @example
 * ```ts
 * const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({}));
 * const Event = v.looseObject({ ...EventSchema.entries, accountId: v.string(), amountCents: v.number() });
 * // The event type given: TypeScript infers it from a `parse` variable, not from an inline call.
 * export const handler = createAtLeastOnceHandler<v.InferOutput<typeof Event>>({
 *   parse: parseWith(Event),
 *   work: async (event) => {
 *     await ddb.send(new UpdateCommand({
 *       TableName: 'ledger',
 *       Key: { pk: `ACCOUNT#${event.accountId}` },
 *       UpdateExpression: 'ADD balanceCents :amount',
 *       ExpressionAttributeValues: { ':amount': event.amountCents },
 *     }));
 *   },
 * });
 * ```
 */
export function createAtLeastOnceHandler<E extends ConsumerEvent = ConsumerEvent>(
  options: AtLeastOnceOptions<E>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const parse = options.parse ?? (parseEvent as ParseEvent<E>);
  const logger = options.logger ?? jsonLogger;
  return (event) =>
    processInOrder(
      event.Records,
      async (record) => options.work(await parse(record.body, record), record),
      logger,
    );
}

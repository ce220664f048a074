import { ChangeMessageVisibilityBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { isFifoRecord, processInOrder } from './batch.js';
import { ConsumerError, WriteFailedError } from './errors.js';
import { type ConsumerEvent, type ParseEvent, parseEvent } from './event.js';
import { type ConsumerLogger, describeError, guardedSignals, jsonLogger } from './logger.js';
import { positionOf, storedVersion } from './version.js';

/** The event's predecessor is not applied: on a FIFO queue it was dead-lettered, so this one waits. */
export class SequenceGapError extends ConsumerError {
  override readonly name = 'SequenceGapError';
  constructor(
    readonly eventId: string,
    readonly seq: number,
    readonly storedVersion: number,
  ) {
    super(`event ${eventId} is #${seq} of its stream, but #${storedVersion} is the last applied: a gap`);
  }
}

export interface FifoVersionedOptions<E extends ConsumerEvent> {
  readonly ddb: DynamoDBDocumentClient;
  readonly table: string;
  /** The FIFO queue the mapping reads: records behind a gap are released there at once. */
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** The item the deltas go to, e.g. `{ pk: 'ACCOUNT#<accountId>' }`: one message group per item. */
  readonly key: (event: NoInfer<E>, record: SQSRecord) => Record<string, string | number>;
  /** The event's position in its item's stream (1, 2, 3, …), stamped by the producer. */
  readonly seqOf: (event: NoInfer<E>) => number;
  /** The numbers the event adds, by attribute, e.g. `{ balanceCents: event.amountCents }`. */
  readonly deltasOf: (event: NoInfer<E>) => Record<string, number>;
  /** @default {@link parseEvent} */
  readonly parse?: ParseEvent<E>;
  /** @default JSON lines on the console */
  readonly logger?: ConsumerLogger;
  readonly signals?: {
    /** The stored version shows the event is in already: a redelivery, nothing written. */
    repeat?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
  };
}

/**
 * An SQS handler for ordered deltas on a FIFO queue (one message group per item): ONE conditional
 * UpdateItem adds the deltas and sets `version` to the event's seq only if the stored version is
 * seq − 1. The version says which events are in, so a delta is safe to apply twice without a
 * marker: a repeat finds its seq or a later one and writes nothing. A gap (the predecessor not
 * applied) fails the record and the rest of its group, and makes them visible again at once: on a
 * FIFO queue the predecessor was dead-lettered, so waiting a visibility timeout cannot fill it, and
 * the records reach the DLQ behind it, in order (docs/ordering.md, "The gap policy"). Needs
 * ReportBatchItemFailures on the mapping.
 *
 * @example
 * ```ts
 * const Event = v.looseObject({ ...EventSchema.entries, accountId: v.string(), seq: v.number(), amountCents: v.number() });
 * // The event type given: TypeScript infers it from a `parse` variable, not from an inline call.
 * export const handler = createFifoVersionedHandler<v.InferOutput<typeof Event>>({
 *   ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})),
 *   table: 'accounts',
 *   sqs: new SQSClient({}),
 *   queueUrl: process.env.QUEUE_URL!,
 *   parse: parseWith(Event),
 *   key: (event) => ({ pk: `ACCOUNT#${event.accountId}` }),
 *   seqOf: (event) => event.seq,
 *   deltasOf: (event) => ({ balanceCents: event.amountCents }),
 * });
 * ```
 */
export function createFifoVersionedHandler<E extends ConsumerEvent = ConsumerEvent>(
  options: FifoVersionedOptions<E>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const parse = options.parse ?? (parseEvent as ParseEvent<E>);
  const logger = options.logger ?? jsonLogger;
  const signals = guardedSignals(options.signals, logger);

  async function creditInOrder(record: SQSRecord): Promise<void> {
    const event = await parse(record.body, record);
    const seq = positionOf(options.seqOf(event), 'seq');
    const deltas = Object.entries(options.deltasOf(event));
    const first = seq === 1;
    try {
      await options.ddb.send(
        new UpdateCommand({
          TableName: options.table,
          Key: options.key(event, record),
          UpdateExpression: `${deltas.length > 0 ? `ADD ${deltas.map((_, index) => `#d${index} :d${index}`).join(', ')} ` : ''}SET #version = :seq`,
          ConditionExpression: first ? 'attribute_not_exists(#version)' : '#version = :previous',
          ExpressionAttributeNames: {
            '#version': 'version',
            ...Object.fromEntries(deltas.map(([name], index) => [`#d${index}`, name])),
          },
          ExpressionAttributeValues: {
            ':seq': seq,
            ...(first ? {} : { ':previous': seq - 1 }),
            ...Object.fromEntries(deltas.map(([, value], index) => [`:d${index}`, value])),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) {
        throw new WriteFailedError(describeError(error), { cause: error });
      }
      const stored = storedVersion(error) ?? 0;
      if (seq > stored) throw new SequenceGapError(event.eventId, seq, stored);
      await signals.repeat?.(event, record);
    }
  }

  return async (event) => {
    const gaps = new Set<SQSRecord>();
    const response = await processInOrder(
      event.Records,
      async (record) => {
        try {
          await creditInOrder(record);
        } catch (error) {
          // Only a FIFO queue holds the rest of the group back: on a standard one a release would
          // only spend the records' receives.
          if (error instanceof SequenceGapError && isFifoRecord(record)) gaps.add(record);
          throw error;
        }
      },
      logger,
    );
    const gapGroups = new Set([...gaps].map((record) => record.attributes.MessageGroupId ?? ''));
    const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
    const blocked = event.Records.filter(
      (record) => failed.has(record.messageId) && gapGroups.has(record.attributes.MessageGroupId ?? ''),
    );
    if (blocked.length > 0) await release(options.sqs, options.queueUrl, blocked, logger);
    return response;
  };
}

/** Makes records visible now. Best effort: one that stays invisible comes back after its timeout. */
async function release(sqs: SQSClient, queueUrl: string, records: SQSRecord[], logger: ConsumerLogger) {
  for (let start = 0; start < records.length; start += 10) {
    const chunk = records.slice(start, start + 10);
    try {
      const { Failed = [] } = await sqs.send(
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
        logger.warn(
          'some records were not released after a gap; they come back after the visibility timeout',
          {
            failed: Failed.map((entry) => `${chunk[Number(entry.Id)]?.messageId}: ${entry.Code}`),
          },
        );
      }
    } catch (error) {
      logger.warn('could not release the records after a gap; they come back after the visibility timeout', {
        error: describeError(error),
      });
    }
  }
}

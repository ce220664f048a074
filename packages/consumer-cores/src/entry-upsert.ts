import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { processInOrder } from './batch.js';
import { ConflictingReuseError, WriteFailedError } from './errors.js';
import { type ConsumerEvent, type ParseEvent, parseEvent } from './event.js';
import { fingerprintOf } from './fingerprint.js';
import { type ConsumerLogger, describeError, guardedSignals, jsonLogger } from './logger.js';

export interface EntryUpsertOptions<E extends ConsumerEvent> {
  readonly ddb: DynamoDBDocumentClient;
  readonly table: string;
  /** The entry's attributes: what the event says, e.g. its account and amount. */
  readonly entryOf: (event: NoInfer<E>) => Record<string, unknown>;
  /** The entry's key. @default `{ pk: 'ENTRY#<eventId>' }` */
  readonly entryKey?: (event: NoInfer<E>, record: SQSRecord) => Record<string, string | number>;
  /** @default {@link parseEvent} */
  readonly parse?: ParseEvent<E>;
  /** @default SHA-256 of the event as canonical JSON, without its `createdAt` */
  readonly fingerprint?: (event: NoInfer<E>) => string | Promise<string>;
  /** @default JSON lines on the console */
  readonly logger?: ConsumerLogger;
  readonly signals?: {
    /** The entry was there already with the same payload: written again, nothing changed. */
    repeat?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
    conflictingReuse?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
  };
}

/**
 * An SQS handler that writes one entry per event, keyed on its event id, with ONE UpdateItem:
 * "upsert by a unique key". A redelivery writes the same item again and nothing changes, in any
 * order, with no marker and no transaction. There is no balance item to add to: a balance is the
 * sum of an account's entries, read by whoever needs it (so put the account in the entry's key or
 * an index if balances are read often: docs/cost-and-benchmarks.md). A reused event id with another payload
 * is refused, not overwritten. Needs ReportBatchItemFailures on the mapping.
 *
 * @example
 * ```ts
 * const Event = v.looseObject({ ...EventSchema.entries, accountId: v.string(), amountCents: v.number() });
 * // The event type given: TypeScript infers it from a `parse` variable, not from an inline call.
 * export const handler = createEntryUpsertHandler<v.InferOutput<typeof Event>>({
 *   ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})),
 *   table: 'ledger',
 *   parse: parseWith(Event),
 *   entryOf: (event) => ({ accountId: event.accountId, amountCents: event.amountCents }),
 * });
 * ```
 */
export function createEntryUpsertHandler<E extends ConsumerEvent = ConsumerEvent>(
  options: EntryUpsertOptions<E>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const parse = options.parse ?? (parseEvent as ParseEvent<E>);
  const entryKey = options.entryKey ?? ((event: NoInfer<E>) => ({ pk: `ENTRY#${event.eventId}` }));
  const fingerprint = options.fingerprint ?? fingerprintOf;
  const logger = options.logger ?? jsonLogger;
  const signals = guardedSignals(options.signals, logger);

  async function upsert(record: SQSRecord): Promise<void> {
    const event = await parse(record.body, record);
    const key = entryKey(event, record);
    const attributes = Object.entries(options.entryOf(event));
    const hash = await fingerprint(event);
    try {
      const { Attributes } = await options.ddb.send(
        new UpdateCommand({
          TableName: options.table,
          Key: key,
          UpdateExpression: `SET #payloadHash = :payloadHash${attributes.map((_, index) => `, #e${index} = :e${index}`).join('')}`,
          // Only a reused event id with another payload must not overwrite the first.
          ConditionExpression: 'attribute_not_exists(#pk) OR #payloadHash = :payloadHash',
          ExpressionAttributeNames: {
            '#pk': Object.keys(key)[0] ?? 'pk',
            '#payloadHash': 'payloadHash',
            ...Object.fromEntries(attributes.map(([name], index) => [`#e${index}`, name])),
          },
          ExpressionAttributeValues: {
            ':payloadHash': hash,
            ...Object.fromEntries(attributes.map(([, value], index) => [`:e${index}`, value])),
          },
          // The old item, if there was one: a repeat. (ALL_OLD is documented to return nothing for a new item.)
          ReturnValues: 'ALL_OLD',
        }),
      );
      if (Attributes !== undefined) await signals.repeat?.(event, record);
    } catch (error) {
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') {
        await signals.conflictingReuse?.(event, record);
        throw new ConflictingReuseError(event.eventId, { cause: error });
      }
      throw new WriteFailedError(describeError(error), { cause: error });
    }
  }

  return (event) => processInOrder(event.Records, upsert, logger);
}

import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { processInOrder } from './batch.js';
import { WriteFailedError } from './errors.js';
import { type ConsumerEvent, type ParseEvent, parseEvent } from './event.js';
import { type ConsumerLogger, describeError, guardedSignals, jsonLogger } from './logger.js';
import { positionOf, storedVersion } from './version.js';

export interface StateUpsertOptions<E extends ConsumerEvent> {
  readonly ddb: DynamoDBDocumentClient;
  readonly table: string;
  /** The item holding the entity's state, e.g. `{ pk: 'ACCOUNT#<accountId>' }`. */
  readonly stateKey: (event: NoInfer<E>, record: SQSRecord) => Record<string, string | number>;
  /** The event's position in its entity's stream (1, 2, 3, …), stamped by the producer. */
  readonly versionOf: (event: NoInfer<E>) => number;
  /** The entity's state after the event: what the item holds once it is written. */
  readonly stateOf: (event: NoInfer<E>) => Record<string, unknown>;
  /** @default {@link parseEvent} */
  readonly parse?: ParseEvent<E>;
  /** @default JSON lines on the console */
  readonly logger?: ConsumerLogger;
  readonly signals?: {
    /** A newer state was stored already: nothing written, and nothing lost (it contains this one). */
    superseded?(event: NoInfer<E>, storedVersion: number, record: SQSRecord): void | Promise<void>;
    /** The event's own state was stored already: a redelivery. */
    repeat?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
  };
}

/**
 * An SQS handler that keeps the latest state: ONE conditional UpdateItem writes the event's state
 * and version only if the stored version is older. A repeat finds its own version and writes
 * nothing; an event that arrives after a later one finds a newer version and writes nothing
 * either, since the newer state already contains it. Duplicates and reordering are harmless by
 * nature, with no marker; intermediate states may be skipped. The producer must send states (the
 * balance after the event), not deltas. Needs ReportBatchItemFailures on the mapping.
 *
 * @example
 * ```ts
 * const Event = v.looseObject({ ...EventSchema.entries, accountId: v.string(), seq: v.number(), balanceAfterCents: v.number() });
 * // The event type given: TypeScript infers it from a `parse` variable, not from an inline call.
 * export const handler = createStateUpsertHandler<v.InferOutput<typeof Event>>({
 *   ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})),
 *   table: 'accounts',
 *   parse: parseWith(Event),
 *   stateKey: (event) => ({ pk: `ACCOUNT#${event.accountId}` }),
 *   versionOf: (event) => event.seq,
 *   stateOf: (event) => ({ balanceCents: event.balanceAfterCents }),
 * });
 * ```
 */
export function createStateUpsertHandler<E extends ConsumerEvent = ConsumerEvent>(
  options: StateUpsertOptions<E>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const parse = options.parse ?? (parseEvent as ParseEvent<E>);
  const logger = options.logger ?? jsonLogger;
  const signals = guardedSignals(options.signals, logger);

  async function upsert(record: SQSRecord): Promise<void> {
    const event = await parse(record.body, record);
    const version = positionOf(options.versionOf(event), 'version');
    const state = Object.entries(options.stateOf(event));
    try {
      await options.ddb.send(
        new UpdateCommand({
          TableName: options.table,
          Key: options.stateKey(event, record),
          UpdateExpression: `SET ${state.map((_, index) => `#s${index} = :s${index}, `).join('')}#version = :version`,
          ConditionExpression: 'attribute_not_exists(#version) OR #version < :version',
          ExpressionAttributeNames: {
            '#version': 'version',
            ...Object.fromEntries(state.map(([name], index) => [`#s${index}`, name])),
          },
          ExpressionAttributeValues: {
            ':version': version,
            ...Object.fromEntries(state.map(([, value], index) => [`:s${index}`, value])),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) {
        throw new WriteFailedError(describeError(error), { cause: error });
      }
      const stored = storedVersion(error);
      if (stored === version) await signals.repeat?.(event, record);
      else await signals.superseded?.(event, stored ?? version, record);
    }
  }

  return (event) => processInOrder(event.Records, upsert, logger);
}

import type { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type AgeGuard, ageGuardFor, checkAge } from './age-guard.js';
import { processInOrder } from './batch.js';
import {
  ConflictingReuseError,
  MarkerKeyInUseError,
  TooOldToDedupeError,
  TransactionLimitError,
  WriteFailedError,
  WriteRefusedError,
} from './errors.js';
import { type ConsumerEvent, type ParseEvent, parseEvent } from './event.js';
import { fingerprintOf, storedFingerprint } from './fingerprint.js';
import { type ConsumerLogger, describeError, guardedSignals, jsonLogger } from './logger.js';
import { sleep, utf8 } from './runtime.js';

/** One item of a document client's TransactWriteItems. */
export type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/** A DynamoDB key, plain values (the document client marshalls them). */
export type Key = Record<string, string | number>;

/** What a team alarms on; each is awaited, so a metric write finishes before the record moves on. */
export interface EffectivelyOnceSignals<E> {
  /** A redelivery found its marker: skipped, nothing written. */
  duplicate?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
  /** The event id was applied before with another payload: a producer bug; the record fails. */
  conflictingReuse?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
  /** Older than the marker remembers: refused before any write; the record fails. */
  tooOld?(event: NoInfer<E>, ageSeconds: number, record: SQSRecord): void | Promise<void>;
  /** A transaction cancelled by a conflict or throttling, tried again. Hot keys show here. */
  retried?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
}

export interface EffectivelyOnceOptions<E extends ConsumerEvent> {
  /** A DynamoDB document client: its SDK retries keep one ClientRequestToken per transaction. */
  readonly ddb: DynamoDBDocumentClient;
  /** The table of the markers. The team's writes may be in other tables of the same account and Region. */
  readonly markerTable: string;
  /**
   * The team's writes for this event, applied with its marker or not at all: at most 99 items (the
   * marker is the hundredth), 4 MB in all, none on the marker's item.
   */
  readonly writesFor: (event: NoInfer<E>, record: SQSRecord) => TransactItem[] | Promise<TransactItem[]>;
  /** The marker's key. @default `{ pk: 'EVENT#<eventId>' }`: a partition per event. */
  readonly markerKey?: (event: NoInfer<E>, record: SQSRecord) => Key;
  /** Reads and validates a body. @default {@link parseEvent}: `eventId`, `createdAt`, anything else kept */
  readonly parse?: ParseEvent<E>;
  /**
   * What tells a redelivery (the same payload) from a reused event id (another payload).
   * @default SHA-256 of the event as canonical JSON, without its `createdAt`
   */
  readonly fingerprint?: (event: NoInfer<E>) => string | Promise<string>;
  /** How long a marker remembers its event. @default 30 days */
  readonly markerTtlSeconds?: number;
  /** How long the marker item is kept (its TTL attribute), at least `markerTtlSeconds`. @default markerTtlSeconds */
  readonly keepForSeconds?: number;
  /** The table's TTL attribute (epoch seconds). @default 'expiresAt' */
  readonly ttlAttribute?: string;
  /** Refuse events older than a marker remembers; `false` turns it off. @default ageGuardFor(markerTtlSeconds) */
  readonly ageGuard?: AgeGuard | false;
  /** Retries of a transaction cancelled by a conflict or throttling. @default 3 attempts, 50 ms base */
  readonly retry?: { readonly attempts: number; readonly baseDelayMs: number };
  /** @default Date.now */
  readonly clock?: () => number;
  /** @default JSON lines on the console */
  readonly logger?: ConsumerLogger;
  readonly signals?: EffectivelyOnceSignals<E>;
}

const THIRTY_DAYS = 30 * 24 * 3600;
const MAX_TEAM_ITEMS = 99;
const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;
const TRANSIENT = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * An SQS handler that applies each event exactly once: the team's writes and a marker keyed on
 * the event id go in ONE `TransactWriteItems`, the marker's condition "no marker remembers this
 * event". A redelivery (a crash before the batch was acknowledged, a visibility timeout, a re-send
 * or a redrive) cancels the transaction on the marker, and the record is skipped. Nothing is
 * written between the check and the writes, so no crash can leave one without the other.
 *
 * A marker past its `dedupeUntil` counts as absent, deleted by TTL or not (TTL deletes late, never
 * early); the age guard refuses events that old. Needs ReportBatchItemFailures on the mapping.
 *
 * @example
 * ```ts
 * const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({}));
 * const Event = v.looseObject({ ...EventSchema.entries, accountId: v.string(), amountCents: v.number() });
 * // The event type given: TypeScript infers it from a `parse` variable, not from an inline call.
 * export const handler = createEffectivelyOnceHandler<v.InferOutput<typeof Event>>({
 *   ddb,
 *   markerTable: 'ledger',
 *   parse: parseWith(Event),
 *   writesFor: (event) => [
 *     {
 *       Update: {
 *         TableName: 'ledger',
 *         Key: { pk: `ACCOUNT#${event.accountId}` },
 *         UpdateExpression: 'ADD balanceCents :amount',
 *         ExpressionAttributeValues: { ':amount': event.amountCents },
 *       },
 *     },
 *   ],
 * });
 * ```
 */
export function createEffectivelyOnceHandler<E extends ConsumerEvent = ConsumerEvent>(
  options: EffectivelyOnceOptions<E>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const parse = options.parse ?? (parseEvent as ParseEvent<E>);
  const markerKey = options.markerKey ?? ((event: NoInfer<E>) => ({ pk: `EVENT#${event.eventId}` }));
  const fingerprint = options.fingerprint ?? fingerprintOf;
  const ttlSeconds = options.markerTtlSeconds ?? THIRTY_DAYS;
  const guard = options.ageGuard ?? ageGuardFor(ttlSeconds);
  const clock = options.clock ?? Date.now;
  const logger = options.logger ?? jsonLogger;
  const retry = options.retry ?? { attempts: 3, baseDelayMs: 50 };
  const signals = guardedSignals(options.signals, logger);

  async function applyOnce(record: SQSRecord): Promise<void> {
    const event = await parse(record.body, record);
    const now = clock();
    if (guard) {
      try {
        checkAge(event, now, guard);
      } catch (error) {
        if (error instanceof TooOldToDedupeError) await signals.tooOld?.(event, error.ageSeconds, record);
        throw error;
      }
    }
    const key = markerKey(event, record);
    const writes = await options.writesFor(event, record);
    refuseOverLimits(options.markerTable, key, writes);
    const hash = await fingerprint(event);
    const marker = markerUpdate(options.markerTable, key, hash, Math.floor(now / 1000), {
      ttlSeconds,
      keepForSeconds: Math.max(ttlSeconds, options.keepForSeconds ?? ttlSeconds),
      ttlAttribute: options.ttlAttribute ?? 'expiresAt',
    });
    for (let attempt = 1; ; attempt += 1) {
      try {
        // Each send is a fresh ClientRequestToken; the SDK's own retries inside it reuse one.
        await options.ddb.send(new TransactWriteCommand({ TransactItems: [{ Update: marker }, ...writes] }));
        return;
      } catch (error) {
        if (!isCancellation(error)) throw new WriteFailedError(describe(error), { cause: error });
        const reasons = error.CancellationReasons ?? [];
        if (reasons[0]?.Code === 'ConditionalCheckFailed') {
          if (reasons[0].Item === undefined) {
            // ReturnValuesOnConditionCheckFailure asked for it: without it a reuse cannot be told apart.
            logger.warn('marker found without its item: a reused event id would pass as a duplicate', {
              eventId: event.eventId,
            });
          }
          // Every marker has an expiry: an item without one is another entity's, on the same key.
          if (reasons[0].Item !== undefined && !('dedupeUntil' in reasons[0].Item)) {
            throw new MarkerKeyInUseError(event.eventId);
          }
          const stored = storedFingerprint(reasons[0].Item);
          // A marker without a fingerprint (written before there was one) counts as the same payload.
          if (stored !== undefined && stored !== hash) {
            await signals.conflictingReuse?.(event, record);
            throw new ConflictingReuseError(event.eventId, { cause: error });
          }
          logger.info('duplicate suppressed: event already applied', {
            eventId: event.eventId,
            messageId: record.messageId,
            receiveCount: record.attributes.ApproximateReceiveCount,
          });
          await signals.duplicate?.(event, record);
          return;
        }
        // Reasons come in the order of the items: the marker, then the team's writes.
        const refused = reasons.findIndex(
          (reason, index) => index > 0 && reason.Code === 'ConditionalCheckFailed',
        );
        if (refused > 0) {
          throw new WriteRefusedError(event.eventId, refused - 1, reasons[refused]?.Item, { cause: error });
        }
        // A cancelled transaction wrote nothing: trying again cannot apply twice.
        if (attempt >= retry.attempts || !reasons.some((reason) => TRANSIENT.has(reason.Code ?? ''))) {
          throw new WriteFailedError(describe(error), { cause: error });
        }
        await signals.retried?.(event, record);
        await sleep(Math.random() * retry.baseDelayMs * 2 ** attempt);
      }
    }
  }

  return (event) => processInOrder(event.Records, applyOnce, logger);
}

/**
 * The marker: SET its fingerprint and its expiry only if no marker remembers the event. An Update,
 * not a Put, so that attributes others keep on the item survive a write after the expiry.
 */
function markerUpdate(
  table: string,
  key: Key,
  hash: string,
  nowSeconds: number,
  ttl: { readonly ttlSeconds: number; readonly keepForSeconds: number; readonly ttlAttribute: string },
) {
  return {
    TableName: table,
    Key: key,
    ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now',
    UpdateExpression: 'SET #payloadHash = :payloadHash, #dedupeUntil = :dedupeUntil, #ttl = :ttl',
    ExpressionAttributeNames: {
      '#pk': Object.keys(key)[0] ?? 'pk',
      '#payloadHash': 'payloadHash',
      '#dedupeUntil': 'dedupeUntil',
      '#ttl': ttl.ttlAttribute,
    },
    ExpressionAttributeValues: {
      ':now': nowSeconds,
      ':payloadHash': hash,
      ':dedupeUntil': nowSeconds + ttl.ttlSeconds,
      ':ttl': nowSeconds + ttl.keepForSeconds,
    },
    // The stored fingerprint tells a redelivery from a reused event id.
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/** DynamoDB's transaction limits, checked before sending: a refused transaction is a failed record forever. */
function refuseOverLimits(table: string, key: Key, writes: readonly TransactItem[]): void {
  if (writes.length > MAX_TEAM_ITEMS) {
    throw new TransactionLimitError(
      `${writes.length} writes for one event: at most ${MAX_TEAM_ITEMS} fit beside the marker`,
    );
  }
  // An estimate on the request's JSON (bigints, sets and bytes sized as written), not DynamoDB's item sizes.
  const bytes = utf8(JSON.stringify(writes, sizedValue)).length;
  if (bytes > MAX_TRANSACTION_BYTES) {
    throw new TransactionLimitError(
      `the writes for one event are about ${bytes} bytes: a transaction holds 4 MB`,
    );
  }
  // One transaction cannot act on one item twice (AWS: "no two actions can target the same item").
  // A Put names its whole item, so it is compared on the keys the other writes name.
  const keyed = [{ table: tableName(table), key }];
  for (const write of writes) {
    const target = write.Put ?? write.Update ?? write.Delete ?? write.ConditionCheck;
    const name = tableName(target?.TableName ?? '');
    const own: Key | undefined = write.Put ? undefined : ((target as { Key?: Key }).Key ?? {});
    const clash = keyed.find(
      (other) =>
        other.table === name &&
        Object.entries(other.key).every(
          ([attribute, value]) => (own ?? write.Put?.Item)?.[attribute] === value,
        ) &&
        (own === undefined || Object.keys(own).length === Object.keys(other.key).length),
    );
    if (clash !== undefined) {
      throw new TransactionLimitError(
        `${clash === keyed[0] ? 'a write targets the marker item' : 'two writes target one item'}: one transaction cannot write an item twice`,
      );
    }
    if (own !== undefined) keyed.push({ table: name, key: own });
  }
}

/** A table's name, given as a name or an ARN (`arn:…:table/<name>`). */
function tableName(table: string): string {
  const at = table.indexOf(':table/');
  return at === -1 ? table : table.slice(at + ':table/'.length);
}

function sizedValue(_: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Set) return [...value];
  if (value instanceof Uint8Array) return 'x'.repeat(value.byteLength);
  return value;
}

/**
 * By name, not instanceof: a second copy of the DynamoDB client in a bundle would make instanceof
 * fail silently and turn every duplicate into a failure.
 */
function isCancellation(error: unknown): error is TransactionCanceledException {
  return error instanceof Error && error.name === 'TransactionCanceledException';
}

function describe(error: unknown): string {
  if (isCancellation(error)) {
    return `transaction cancelled [${(error.CancellationReasons ?? []).map((r) => r.Code ?? 'None').join(', ')}]`;
  }
  return describeError(error);
}

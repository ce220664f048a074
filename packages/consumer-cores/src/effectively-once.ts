import type { CancellationReason, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type AgeGuard, ageGuardFor, checkAge } from './age-guard.js';
import { processInOrder } from './batch.js';
import {
  ConflictingReuseError,
  MarkerKeyInUseError,
  RefusalNotRecordableError,
  TooOldToDedupeError,
  WriteFailedError,
  WriteRefusedError,
} from './errors.js';
import { type ConsumerEvent, type ParseEvent, parseEvent } from './event.js';
import { fingerprintOf, storedFingerprint } from './fingerprint.js';
import { type ConsumerLogger, guardedSignals, jsonLogger } from './logger.js';
import { negatedCondition } from './negated-condition.js';
import { sleep } from './runtime.js';
import { describeFailure, type Key, refuseOverLimits, type TransactItem, transact } from './transaction.js';

export type { Key, TransactItem };

/**
 * What the core does with a write refused by its own condition (`onRefused`). An async callback
 * returns `RefusalDecision.record` (or `'record' as const`): TypeScript widens a bare string
 * returned by an async function to `string`.
 */
export const RefusalDecision = { retry: 'retry', record: 'record' } as const;
export type RefusalDecision = (typeof RefusalDecision)[keyof typeof RefusalDecision];

/** What a team alarms on; each is awaited, so a metric write finishes before the record moves on. */
export interface EffectivelyOnceSignals<E> {
  /** A redelivery found its marker: skipped, nothing written. */
  duplicate?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
  /** The event id was applied before with another payload: a producer bug; the record fails. */
  conflictingReuse?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
  /** Older than the marker remembers: refused before any write; the record fails. */
  tooOld?(event: NoInfer<E>, ageSeconds: number, record: SQSRecord): void | Promise<void>;
  /**
   * A transaction cancelled by a conflict or throttling, or a refusal its item no longer confirms
   * (see `onRefused`), tried again. Hot keys show here.
   */
  retried?(event: NoInfer<E>, record: SQSRecord): void | Promise<void>;
  /** A refused write recorded once (`onRefused` said 'record'): the record is acknowledged. */
  refused?(event: NoInfer<E>, error: WriteRefusedError, record: SQSRecord): void | Promise<void>;
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
  /**
   * What to do when one of the writes fails its own condition, asked for each write that did (a
   * refusal is recorded only if each says 'record'): `error.index` is its place in
   * `writesFor`'s writes, `error.item` the item as it was (if the write asked for
   * `ReturnValuesOnConditionCheckFailure`). 'retry' (a version check that lost a race): the record
   * fails and SQS delivers it again, as without this option. 'record' (a business "no": out of
   * stock, over a limit): the refusal is decided once. A cancelled transaction wrote nothing, so a
   * second one writes the marker with `outcome: 'refused'`, a ConditionCheck `NOT (<the write's
   * condition>)` on the refused item (with only the placeholders that condition names), and
   * `rejectionWritesFor`'s writes; then `signals.refused`, and the record is acknowledged. A
   * redelivery finds the marker: a duplicate.
   *
   * The item may change between the two transactions: if the check fails (the write would now
   * succeed), nothing is recorded and the first transaction is tried again, within `retry`; still
   * undecided after that, the record fails and SQS delivers it again. A refused Put names no key
   * (which of its attributes make one is the table's), so its refusal cannot be checked again:
   * 'record' fails it with RefusalNotRecordableError; write it as an Update with the same condition.
   * @default () => 'retry'
   */
  readonly onRefused?: (
    error: WriteRefusedError,
    event: NoInfer<E>,
    record: SQSRecord,
  ) => RefusalDecision | Promise<RefusalDecision>;
  /**
   * The team's writes beside a recorded refusal (a rejected order line), in the second transaction:
   * at most 98, none on the marker's item or the refused one. @default none
   */
  readonly rejectionWritesFor?: (
    event: NoInfer<E>,
    error: WriteRefusedError,
    record: SQSRecord,
  ) => TransactItem[] | Promise<TransactItem[]>;
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
 *
 * @example A business refusal, decided once: out of stock is recorded, not retried for half an hour.
 * ```ts
 * const Order = v.looseObject({ ...EventSchema.entries, sku: v.string(), quantity: v.number() });
 * export const handler = createEffectivelyOnceHandler<v.InferOutput<typeof Order>>({
 *   ddb,
 *   markerTable: 'stock',
 *   parse: parseWith(Order),
 *   writesFor: (order) => [
 *     {
 *       Update: {
 *         TableName: 'stock',
 *         Key: { pk: `SKU#${order.sku}` },
 *         UpdateExpression: 'SET stock = stock - :q',
 *         ConditionExpression: 'stock >= :q',
 *         ExpressionAttributeValues: { ':q': order.quantity },
 *       },
 *     },
 *   ],
 *   // Write 0 is the decrement: its "no" is the business's. Anything else (a version check) is retried.
 *   onRefused: (error) => (error.index === 0 ? 'record' : 'retry'),
 *   rejectionWritesFor: (order) => [
 *     { Put: { TableName: 'stock', Item: { pk: `REJECTED#${order.eventId}`, sku: order.sku, reason: 'out of stock' } } },
 *   ],
 *   signals: { refused: (order) => metrics.addMetric('OutOfStock', 'Count', 1) },
 * });
 * // Out of stock: one transaction refused, then ONE that writes the marker (outcome 'refused') and
 * // the rejected line, if `NOT (stock >= :q)` still holds. Acknowledged; a redelivery is a duplicate.
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
    const markerOf = (outcome: 'applied' | 'refused'): TransactItem => ({
      Update: markerUpdate(options.markerTable, key, hash, outcome, Math.floor(now / 1000), {
        ttlSeconds,
        keepForSeconds: Math.max(ttlSeconds, options.keepForSeconds ?? ttlSeconds),
        ttlAttribute: options.ttlAttribute ?? 'expiresAt',
      }),
    });

    /** Item 0 of a cancelled transaction found a marker: a redelivery returns, anything else throws. */
    async function markerFound(found: CancellationReason, error: TransactionCanceledException) {
      if (found.Item === undefined) {
        // ReturnValuesOnConditionCheckFailure asked for it: without it a reuse cannot be told apart.
        logger.warn('marker found without its item: a reused event id would pass as a duplicate', {
          eventId: event.eventId,
        });
      }
      // Every marker has an expiry: an item without one is another entity's, on the same key.
      if (found.Item !== undefined && !('dedupeUntil' in found.Item)) {
        throw new MarkerKeyInUseError(event.eventId);
      }
      const stored = storedFingerprint(found.Item);
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
    }

    /** The second transaction: the marker, refused, if the refused write would still be refused. */
    async function recordRefusal(refusal: WriteRefusedError) {
      const write = writes[refusal.index];
      const check = negatedCondition(write?.Update ?? write?.Delete ?? write?.ConditionCheck);
      if (check === undefined) {
        throw new RefusalNotRecordableError(event.eventId, refusal.index, { cause: refusal });
      }
      const checked = [
        { ConditionCheck: check },
        ...((await options.rejectionWritesFor?.(event, refusal, record)) ?? []),
      ];
      refuseOverLimits(options.markerTable, key, checked);
      return transact(options.ddb, [markerOf('refused'), ...checked]);
    }

    for (let attempt = 1; ; attempt += 1) {
      let cancelled = await transact(options.ddb, [markerOf('applied'), ...writes]);
      if (cancelled === undefined) return;
      let reasons = cancelled.CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return markerFound(reasons[0], cancelled);
      // Reasons come in the order of the items: the marker, then the team's writes.
      // DynamoDB names every write whose condition failed: each is asked, and a refusal is recorded
      // only if each says 'record' (a version check among them is retried); the first one is checked.
      const refusals = reasons.flatMap((reason, index) =>
        index > 0 && reason.Code === 'ConditionalCheckFailed'
          ? [new WriteRefusedError(event.eventId, index - 1, reason.Item, { cause: cancelled })]
          : [],
      );
      const [error] = refusals;
      if (error !== undefined) {
        for (const refusal of refusals) {
          if ((await options.onRefused?.(refusal, event, record)) !== 'record') throw refusal;
        }
        cancelled = await recordRefusal(error);
        if (cancelled === undefined) {
          logger.info('refusal recorded', { eventId: event.eventId, index: error.index });
          await signals.refused?.(event, error, record);
          return;
        }
        reasons = cancelled.CancellationReasons ?? [];
        if (reasons[0]?.Code === 'ConditionalCheckFailed') return markerFound(reasons[0], cancelled);
      }
      // A cancelled transaction wrote nothing: trying again cannot apply twice. A refusal whose
      // check failed (item 1) is undecided: the item changed, and the write would now succeed.
      const again =
        reasons.some((reason) => TRANSIENT.has(reason.Code ?? '')) ||
        (error !== undefined && reasons[1]?.Code === 'ConditionalCheckFailed');
      if (attempt >= retry.attempts || !again) {
        throw new WriteFailedError(describeFailure(cancelled), { cause: cancelled });
      }
      await signals.retried?.(event, record);
      await sleep(Math.random() * retry.baseDelayMs * 2 ** attempt);
    }
  }

  return (event) => processInOrder(event.Records, applyOnce, logger);
}

/**
 * The marker: SET its fingerprint, its expiry and its outcome (the writes applied, or a refusal
 * recorded) only if no marker remembers the event. An Update, not a Put, so that attributes others
 * keep on the item survive a write after the expiry; every marker SETs its outcome, so a marker
 * written over an expired one never keeps the old one's.
 */
function markerUpdate(
  table: string,
  key: Key,
  hash: string,
  outcome: 'applied' | 'refused',
  nowSeconds: number,
  ttl: { readonly ttlSeconds: number; readonly keepForSeconds: number; readonly ttlAttribute: string },
) {
  return {
    TableName: table,
    Key: key,
    ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now',
    UpdateExpression:
      'SET #payloadHash = :payloadHash, #dedupeUntil = :dedupeUntil, #ttl = :ttl, #outcome = :outcome',
    ExpressionAttributeNames: {
      '#pk': Object.keys(key)[0] ?? 'pk',
      '#payloadHash': 'payloadHash',
      '#dedupeUntil': 'dedupeUntil',
      '#ttl': ttl.ttlAttribute,
      '#outcome': 'outcome',
    },
    ExpressionAttributeValues: {
      ':now': nowSeconds,
      ':payloadHash': hash,
      ':outcome': outcome,
      ':dedupeUntil': nowSeconds + ttl.ttlSeconds,
      ':ttl': nowSeconds + ttl.keepForSeconds,
    },
    // The stored fingerprint tells a redelivery from a reused event id.
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

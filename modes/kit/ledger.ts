import type { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictingReuseError, RetryableWriteError } from '../../contract/errors.js';
import {
  applicationKey,
  balanceKey,
  COUNTERS,
  type Counter,
  counterKey,
  DEDUPE_UNTIL_ATTRIBUTE,
  type Delivery,
  markerKey,
  partitionKey,
  refusalKey,
  TTL_ATTRIBUTE,
} from '../../contract/ledger-keys.js';
import { type MessageBody, payloadHash } from '../../contract/message.js';
import type { Retention } from '../../contract/retention.js';
import type { Mode } from '../../contract/topology.js';

export interface Ledger {
  readonly ddb: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly mode: Mode;
  /** How long a marker remembers an event, and how long the run's evidence is kept. */
  readonly retention: Retention;
  /** Injected so tests can pin time; epoch milliseconds. */
  readonly now?: () => number;
  /** Retries of a transaction cancelled by a conflict or throttling. @default 3 attempts, 50 ms base */
  readonly retry?: { readonly attempts: number; readonly baseDelayMs: number };
}

export type CreditOutcome = 'applied' | 'duplicate';

export interface CreditOptions {
  readonly idempotent: boolean;
  /** The provider's charge this credit records (the charge modes): kept on the record, for the verifier. */
  readonly chargeId?: string;
}

/** When DynamoDB's TTL may delete a ledger item: the run's evidence is kept this long. */
export function expiresAt(
  ledger: Pick<Ledger, 'now' | 'retention'>,
  now: number = ledger.now?.() ?? Date.now(),
): number {
  return Math.floor(now / 1000) + ledger.retention.evidenceTtlSeconds;
}

/**
 * Credits the account and writes the application record in ONE transaction, so the ledger and
 * the balances can never disagree.
 *
 * `idempotent: true` (effectively-once) keys the record on the event id alone and writes it with an
 * Update that adds 1 to its `applications` only if no marker remembers the event — none exists, or
 * its `dedupeUntil` has passed (the marker's own expiry, contract/retention.ts; an expired marker is
 * absent whether or not TTL has deleted it yet, as in Powertools' condition): a second delivery of
 * the same event cancels the whole transaction with `ConditionalCheckFailed` on the marker and is
 * reported as a duplicate. The item itself stays as the run's evidence, so an application after the
 * expiry shows as `applications: 2`. The marker counts its own applications, so if the guard ever broke the
 * verifier would see `applications: 2` as a duplicate, not only as drift. A redelivery whose
 * account or amount differ from the marker's is not a duplicate but a reused event id: it throws
 * ConflictingReuseError (the record fails and ends in the DLQ).
 * `idempotent: false` gives every delivery its own record, so duplicates are visible to the verifier.
 *
 * A cancellation by a transaction conflict or throttling is retried a few times with jitter;
 * anything else, or the same after the last attempt, throws RetryableWriteError: the caller must
 * report the record as failed, never as applied.
 */
export async function creditAccount(
  ledger: Ledger,
  message: MessageBody,
  delivery: Delivery,
  options: CreditOptions,
): Promise<CreditOutcome> {
  const transaction = creditTransaction(ledger, message, delivery, options);
  const attempts = ledger.retry?.attempts ?? DEFAULT_RETRY.attempts;
  for (let attempt = 1; ; attempt += 1) {
    try {
      // Each send serializes a fresh ClientRequestToken (the SDK's own retries inside one send
      // reuse it); a fresh token is right here because the cancelled attempt wrote nothing.
      await ledger.ddb.send(new TransactWriteCommand(transaction));
      return 'applied';
    } catch (error) {
      if (options.idempotent && isMarkerConditionFailure(error)) {
        const existing = error.CancellationReasons?.[0]?.Item;
        const stored = existing === undefined ? undefined : stringAttribute(existing, 'payloadHash');
        if (stored !== undefined && stored !== payloadHash(message)) {
          throw new ConflictingReuseError(message.eventId, { cause: error });
        }
        return 'duplicate';
      }
      // A cancelled transaction wrote nothing, so trying again cannot apply twice; a short retry
      // here is far cheaper than handing the record back to SQS for a whole visibility timeout.
      if (attempt < attempts && isTransientCancellation(error)) {
        // Diagnostic only (hot keys): a lost counter update must not fail the record.
        await addToCounter(ledger, message.runId, COUNTERS.retriedCancellations, 1).catch(() => undefined);
        await backoff(ledger, attempt);
        continue;
      }
      throw new RetryableWriteError(writeFailureReason(error), { cause: error });
    }
  }
}

function creditTransaction(
  ledger: Ledger,
  message: MessageBody,
  delivery: Delivery,
  options: CreditOptions,
): TransactWriteCommandInput {
  const pk = partitionKey(message.runId, ledger.mode);
  const now = ledger.now?.() ?? Date.now();
  const ttl = expiresAt(ledger, now);
  const nowSeconds = Math.floor(now / 1000);
  const attributes = {
    runId: message.runId,
    mode: ledger.mode,
    eventId: message.eventId,
    accountId: message.accountId,
    amountCents: message.amountCents,
    payloadHash: payloadHash(message),
    messageId: delivery.messageId,
    receiveCount: delivery.receiveCount,
    requestId: delivery.requestId,
    appliedAt: new Date(now).toISOString(),
    ...(options.chargeId !== undefined ? { chargeId: options.chargeId } : {}),
    [TTL_ATTRIBUTE]: ttl,
  };
  const record = options.idempotent
    ? {
        Update: markerUpdate(
          ledger.tableName,
          { pk, sk: markerKey(message.eventId) },
          {
            ...attributes,
            [DEDUPE_UNTIL_ATTRIBUTE]: nowSeconds + ledger.retention.markerTtlSeconds,
            // The evidence outlives the dedupe window: a longer marker TTL keeps the item longer.
            [TTL_ATTRIBUTE]: Math.max(ttl, nowSeconds + ledger.retention.markerTtlSeconds),
          },
          nowSeconds,
        ),
      }
    : {
        Put: {
          TableName: ledger.tableName,
          Item: { pk, sk: applicationKey(message.eventId, delivery), applications: 1, ...attributes },
        },
      };
  return {
    TransactItems: [
      record,
      {
        Update: {
          TableName: ledger.tableName,
          Key: { pk, sk: balanceKey(message.accountId) },
          UpdateExpression: 'ADD balanceCents :amount SET accountId = :account, #ttl = :ttl',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ':amount': message.amountCents,
            ':account': message.accountId,
            ':ttl': ttl,
          },
        },
      },
    ],
  };
}

/**
 * The processed marker: `ADD applications 1` and the record's attributes, only if no marker
 * remembers the event: none exists, or its dedupe window ended before `nowSeconds`.
 */
function markerUpdate(
  tableName: string,
  key: { readonly pk: string; readonly sk: string },
  attributes: Record<string, string | number>,
  nowSeconds: number,
) {
  const entries = Object.entries(attributes);
  return {
    TableName: tableName,
    Key: key,
    ConditionExpression: 'attribute_not_exists(pk) OR #dedupeUntil < :now',
    UpdateExpression: `ADD #applications :one SET ${entries.map((_, index) => `#a${index} = :a${index}`).join(', ')}`,
    ExpressionAttributeNames: {
      '#applications': 'applications',
      '#dedupeUntil': DEDUPE_UNTIL_ATTRIBUTE,
      ...Object.fromEntries(entries.map(([name], index) => [`#a${index}`, name])),
    },
    ExpressionAttributeValues: {
      ':one': 1,
      ':now': nowSeconds,
      ...Object.fromEntries(entries.map(([, value], index) => [`:a${index}`, value])),
    },
    // The stored payload hash tells a redelivery (same payload) from a reused event id.
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/**
 * The old item of a cancellation reason. The document client does not unmarshall errors, so the
 * attribute arrives as `{ S: "…" }`; accept a plain string too.
 */
function stringAttribute(item: Record<string, unknown>, name: string): string | undefined {
  const value = item[name];
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && 'S' in value && typeof value.S === 'string')
    return value.S;
  return undefined;
}

const DEFAULT_RETRY = { attempts: 3, baseDelayMs: 50 } as const;

/** Cancellation reasons that a moment later usually succeed: another transaction held an item, or throttling. */
const TRANSIENT_CANCELLATION_CODES = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

function isTransientCancellation(error: unknown): boolean {
  return (
    isTransactionCanceled(error) &&
    (error.CancellationReasons ?? []).some((reason) => TRANSIENT_CANCELLATION_CODES.has(reason.Code ?? ''))
  );
}

/** Full jitter, so that conflicting invocations do not retry in lockstep. */
function backoff(ledger: Ledger, attempt: number): Promise<void> {
  const base = ledger.retry?.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs;
  return new Promise((resolve) => setTimeout(resolve, Math.random() * base * 2 ** attempt));
}

/**
 * By name, not instanceof: a second copy of the DynamoDB client in a bundle would make instanceof
 * fail silently and turn every duplicate into a failure.
 */
function isTransactionCanceled(error: unknown): error is TransactionCanceledException {
  return error instanceof Error && error.name === 'TransactionCanceledException';
}

/** True only when the marker (the transaction's first item) already existed. */
export function isMarkerConditionFailure(error: unknown): error is TransactionCanceledException {
  return isTransactionCanceled(error) && error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
}

/**
 * A failed single-item write as a consumer reports it: a failed payload condition is a reused event
 * id (ConflictingReuseError), anything else is worth retrying (RetryableWriteError); either way the
 * record fails and SQS delivers it again.
 */
export function singleWriteError(error: unknown, eventId: string): Error {
  if (error instanceof ConflictingReuseError || error instanceof RetryableWriteError) return error;
  if (error instanceof Error && error.name === 'ConditionalCheckFailedException') {
    return new ConflictingReuseError(eventId, { cause: error });
  }
  return new RetryableWriteError(writeFailureReason(error), { cause: error });
}

function writeFailureReason(error: unknown): string {
  if (isTransactionCanceled(error)) {
    const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
    return `transaction cancelled [${codes.join(', ')}]`;
  }
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** Adds to a per-run counter (deliveries, crashes, suppressed duplicates). */
export async function addToCounter(
  ledger: Ledger,
  runId: string,
  counter: Counter,
  amount: number,
): Promise<void> {
  await ledger.ddb.send(
    new UpdateCommand({
      TableName: ledger.tableName,
      Key: { pk: partitionKey(runId, ledger.mode), sk: counterKey(counter) },
      UpdateExpression: 'ADD #count :n SET #ttl = :ttl',
      ExpressionAttributeNames: { '#count': 'count', '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':n': amount, ':ttl': expiresAt(ledger) },
    }),
  );
}

/**
 * Records that the age guard refused an event (one item per event, counting the refusals): the
 * verifier's `tooOldToDedupe`. Evidence for the run, like a crash record.
 */
export async function recordRefusal(ledger: Ledger, message: MessageBody, ageSeconds: number): Promise<void> {
  await ledger.ddb.send(
    new UpdateCommand({
      TableName: ledger.tableName,
      Key: { pk: partitionKey(message.runId, ledger.mode), sk: refusalKey(message.eventId) },
      UpdateExpression: 'ADD refusals :one SET eventId = :event, lastAgeSeconds = :age, #ttl = :ttl',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: {
        ':one': 1,
        ':event': message.eventId,
        ':age': ageSeconds,
        ':ttl': expiresAt(ledger),
      },
    }),
  );
}

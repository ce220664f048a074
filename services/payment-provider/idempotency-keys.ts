/**
 * The stand-in provider's idempotency keys, as Stripe's behave: a key taken under a lease, taken over
 * when its holder died, completed with its saved response, replayed to a repeat with the same
 * parameters and refused to one with others.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PROVIDER_KEY_RETENTION_SECONDS } from '../../contract/retention.js';
import { errorOutcome, type Outcome } from './charge-request.js';
import {
  DEFAULT_LEASE_SECONDS,
  keyItemKey,
  nowOf,
  type PaymentProvider,
  PROVIDER_TTL_ATTRIBUTE,
} from './provider-table.js';

/**
 * Stripe keeps a key "at least 24 hours"; a repeat after that is a new request. One number with the
 * consumers' age guard, which must refuse an event the key may have been forgotten for.
 */
export const KEY_RETENTION_SECONDS = PROVIDER_KEY_RETENTION_SECONDS;

const leaseMsOf = (provider: PaymentProvider): number =>
  (provider.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;

/** A stored key, as far as the decision needs it. */
interface KeyRecord {
  readonly fingerprint: string;
  readonly state: 'in-flight' | 'completed';
  readonly leaseId: string;
  readonly lockedUntil: number;
  readonly responseStatus?: number;
  readonly responseBody?: string;
}

/**
 * Takes the key for this request (a conditional write: absent, or its record past retention), or
 * takes over a key whose holder's lease expired (the provider died mid-request), or answers for it:
 * the saved response, a conflict, or a parameter mismatch.
 */
export async function takeKey(
  provider: PaymentProvider,
  idempotencyKey: string,
  print: string,
): Promise<{ readonly leaseId: string } | Outcome> {
  // Two rounds at most: a key that vanished or changed between the failed write and our look is
  // decided again on what it has become.
  for (let round = 1; ; round += 1) {
    const now = nowOf(provider);
    const leaseId = randomUUID();
    const retainUntil = now + KEY_RETENTION_SECONDS * 1000;
    const existing = await conditionalPut(provider, {
      ...keyItemKey(idempotencyKey),
      fingerprint: print,
      state: 'in-flight',
      leaseId,
      lockedUntil: now + leaseMsOf(provider),
      createdAt: now,
      retainUntil,
      [PROVIDER_TTL_ATTRIBUTE]: Math.ceil(retainUntil / 1000),
    });
    if (existing === 'taken') return { leaseId };
    if (existing === 'vanished') continue;
    if (existing.fingerprint !== print) {
      return errorOutcome(
        400,
        'idempotency_error',
        'Keys for idempotent requests can only be used with the same parameters they were first used with. ' +
          `Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
      );
    }
    if (existing.state === 'completed' && existing.responseStatus !== undefined && existing.responseBody) {
      return { status: existing.responseStatus, body: existing.responseBody, replayed: true };
    }
    if (existing.lockedUntil > now) return keyInUse(idempotencyKey);
    const takenOver = await takeOver(provider, idempotencyKey, existing, now);
    if (takenOver !== undefined) return takenOver;
    if (round >= 2) return keyInUse(idempotencyKey);
  }
}

export function keyInUse(idempotencyKey: string): Outcome {
  return errorOutcome(
    409,
    'invalid_request_error',
    'There is currently another in-progress request using this Idempotent Key (that probably means you ' +
      `submitted twice, and the other request is still going through): ${idempotencyKey}. Please try again later.`,
    { code: 'idempotency_key_in_use' },
  );
}

/**
 * The key's completion with the response it saves, as a transaction item: conditional on the lease
 * still being this request's, so a request whose lease was taken over completes nothing.
 */
export function keyCompletion(
  provider: PaymentProvider,
  idempotencyKey: string,
  leaseId: string,
  outcome: Outcome,
) {
  return {
    Update: {
      TableName: provider.tableName,
      Key: keyItemKey(idempotencyKey),
      UpdateExpression: 'SET #state = :completed, responseStatus = :status, responseBody = :body',
      ConditionExpression: 'leaseId = :lease AND #state = :inFlight',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':completed': 'completed',
        ':status': outcome.status,
        ':body': outcome.body,
        ':lease': leaseId,
        ':inFlight': 'in-flight',
      },
    },
  };
}

/** The key's new lease, conditional on the expired one still being the key's: one taker wins. */
async function takeOver(
  provider: PaymentProvider,
  idempotencyKey: string,
  expired: KeyRecord,
  now: number,
): Promise<{ readonly leaseId: string } | undefined> {
  const leaseId = randomUUID();
  try {
    await provider.ddb.send(
      new UpdateCommand({
        TableName: provider.tableName,
        Key: keyItemKey(idempotencyKey),
        UpdateExpression: 'SET leaseId = :lease, lockedUntil = :until',
        ConditionExpression: 'leaseId = :expired AND #state = :inFlight AND lockedUntil <= :now',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':lease': leaseId,
          ':until': now + leaseMsOf(provider),
          ':expired': expired.leaseId,
          ':inFlight': 'in-flight',
          ':now': now,
        },
      }),
    );
    return { leaseId };
  } catch (error) {
    if (isConditionalCheckFailed(error)) return undefined;
    throw error;
  }
}

/**
 * Puts the new key unless one is held and within retention; returns the one that is, or `vanished`
 * if it was gone by the time we looked (TTL deleted it).
 */
async function conditionalPut(
  provider: PaymentProvider,
  item: Record<string, unknown>,
): Promise<KeyRecord | 'taken' | 'vanished'> {
  try {
    await provider.ddb.send(
      new PutCommand({
        TableName: provider.tableName,
        Item: item,
        // Past its retention a key is absent, whether or not TTL has deleted it yet.
        ConditionExpression: 'attribute_not_exists(pk) OR retainUntil <= :now',
        ExpressionAttributeValues: { ':now': item.createdAt },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'taken';
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    // An emulator that does not return the old item costs one consistent read.
    const raw = error.Item ?? (await readKey(provider, item.pk, item.sk));
    if (raw === undefined) return 'vanished';
    const record = keyRecordOf(raw);
    if (record === undefined) {
      throw new Error(`the idempotency key record ${String(item.pk)} is unreadable`, { cause: error });
    }
    return record;
  }
}

async function readKey(provider: PaymentProvider, pk: unknown, sk: unknown): Promise<unknown> {
  const { Item } = await provider.ddb.send(
    new GetCommand({ TableName: provider.tableName, Key: { pk, sk }, ConsistentRead: true }),
  );
  return Item;
}

/**
 * The old item a failed conditional write returns is in DynamoDB's wire format (lib-dynamodb leaves
 * it so); a GetCommand's is plain. Both are read.
 */
function keyRecordOf(item: unknown): KeyRecord | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const attribute = (name: string, type: 'S' | 'N'): string | undefined => {
    const value: unknown = (item as Record<string, unknown>)[name];
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    if (typeof value !== 'object' || value === null || !(type in value)) return undefined;
    const raw: unknown = (value as Record<string, unknown>)[type];
    return typeof raw === 'string' ? raw : undefined;
  };
  const fingerprint = attribute('fingerprint', 'S');
  const state = attribute('state', 'S');
  const leaseId = attribute('leaseId', 'S');
  const lockedUntil = attribute('lockedUntil', 'N');
  if (fingerprint === undefined || leaseId === undefined || lockedUntil === undefined) return undefined;
  if (state !== 'in-flight' && state !== 'completed') return undefined;
  const status = attribute('responseStatus', 'N');
  const body = attribute('responseBody', 'S');
  return {
    fingerprint,
    state,
    leaseId,
    lockedUntil: Number(lockedUntil),
    ...(status === undefined ? {} : { responseStatus: Number(status) }),
    ...(body === undefined ? {} : { responseBody: body }),
  };
}

function isConditionalCheckFailed(error: unknown): error is { readonly Item?: unknown } {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

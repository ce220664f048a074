/**
 * A stand-in payment provider that behaves like a real one: Stripe's idempotency keys are the
 * reference (https://docs.stripe.com/api/idempotent_requests). Both transports — the Lambda handler
 * behind a Function URL (handler.ts) and the embedded node:http server (http-server.ts) — call
 * {@link serveRequest}, so they cannot drift apart.
 *
 * Table layout (pk/sk, TTL on {@link PROVIDER_TTL_ATTRIBUTE}):
 *
 *   pk = KEY#<idempotency key>   sk = KEY                 the key: fingerprint, state, lease, saved response
 *   pk = CHARGES#<runId>         sk = CHARGE#<chargeId>   a charge the provider executed (its own ledger)
 *
 * One partition per run holds the run's charges, so the verifier lists them with one paginated
 * Query: the stand-in for Stripe's search by metadata.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  paginateQuery,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { IdentifierSchema, MAX_AMOUNT_CENTS } from '../../contract/message.js';
import { PROVIDER_KEY_RETENTION_SECONDS } from '../../contract/retention.js';

/**
 * Stripe keeps a key "at least 24 hours"; a repeat after that is a new request. One number with the
 * consumers' age guard, which must refuse an event the key may have been forgotten for.
 */
export const KEY_RETENTION_SECONDS = PROVIDER_KEY_RETENTION_SECONDS;
/** How long an executed charge stays listable for the verifier. */
export const CHARGE_RETENTION_SECONDS = 30 * 24 * 3600;
/** How long a request may hold its key before a repeat may take it over (the provider died mid-request). */
export const DEFAULT_LEASE_SECONDS = 10;
/** The TTL attribute of both item kinds (epoch seconds); the construct's table names the same. */
export const PROVIDER_TTL_ATTRIBUTE = 'expiresAt';
/** The longest `x-fault-pause-ms` honoured: a test hook, not a way to hold a connection forever. */
export const MAX_FAULT_PAUSE_MS = 60_000;

/**
 * Test-only fault hooks. A real provider has none; the stand-in honours them so that tests and the
 * experiment can make the two failures that idempotency keys exist for:
 *
 * - `x-fault-lose-response: 1` — execute and commit as usual, then the transport loses the response
 *   (the http server destroys the socket unanswered; the Lambda handler throws after the commit,
 *   which a Function URL answers with 502). The client saw nothing, yet the card was charged.
 * - `x-fault-pause-ms: N` — pause N ms after taking the key's lease and before executing, so a test
 *   can SIGKILL the provider while it holds a key in flight.
 */
export const FAULT_HEADERS = {
  loseResponse: 'x-fault-lose-response',
  pauseMs: 'x-fault-pause-ms',
} as const;

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

export const keyItemKey = (idempotencyKey: string) => ({ pk: `KEY#${idempotencyKey}`, sk: 'KEY' });
export const chargesPartition = (runId: string): string => `CHARGES#${runId}`;
const CHARGE_SK_PREFIX = 'CHARGE#';

const SOURCES = {
  /** Stripe's test token for a card that charges. */
  visa: 'tok_visa',
  /** Stripe's test token for a card that is declined once execution began (402, saved under the key). */
  declined: 'tok_chargeDeclined',
} as const;

export const ChargeRequestSchema = v.strictObject({
  account: IdentifierSchema,
  amountCents: v.pipe(
    v.number(),
    v.integer('must be an integer number of cents'),
    v.minValue(1),
    v.maxValue(MAX_AMOUNT_CENTS),
  ),
  currency: v.pipe(v.string(), v.regex(/^[a-z]{3}$/, 'must be a lowercase ISO currency code like usd')),
  source: v.optional(v.picklist([SOURCES.visa, SOURCES.declined])),
  metadata: v.strictObject({ runId: IdentifierSchema, mode: IdentifierSchema, eventId: IdentifierSchema }),
});

export type ChargeRequest = v.InferInput<typeof ChargeRequestSchema>;

/** Stripe's limit; printable ASCII so a key is always a valid header value and a readable sort key. */
const IdempotencyKeySchema = v.pipe(
  v.string(),
  v.regex(/^[\x21-\x7e]{1,255}$/, 'must be 1–255 printable ASCII characters without spaces'),
);

/** What the provider needs: its table, and a clock tests can move. */
export interface PaymentProvider {
  readonly ddb: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Epoch milliseconds. @default Date.now */
  readonly now?: () => number;
  /** @default {@link DEFAULT_LEASE_SECONDS} */
  readonly leaseSeconds?: number;
}

export interface ProviderRequest {
  readonly method: string;
  readonly path: string;
  /** Header names in lower case, as node:http and Function URL events give them. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string;
}

export interface ProviderResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The exact bytes the first execution answered; a replay sends the same string. */
  readonly body: string;
  /** `x-fault-lose-response` asked the transport to lose this (already committed) response. */
  readonly loseResponse: boolean;
}

interface Outcome {
  readonly status: number;
  readonly body: string;
  readonly replayed?: boolean;
}

/** Routes one request to the charge endpoint; every response is JSON, errors in Stripe's shape. */
export async function serveRequest(
  provider: PaymentProvider,
  request: ProviderRequest,
): Promise<ProviderResponse> {
  const loseResponse = request.headers[FAULT_HEADERS.loseResponse] === '1';
  const outcome = await route(provider, request).catch(
    (error: unknown): Outcome =>
      errorOutcome(
        500,
        'api_error',
        `the provider failed before completing the request: ${messageOf(error)}`,
      ),
  );
  return {
    status: outcome.status,
    headers: {
      'content-type': 'application/json',
      ...(outcome.replayed ? { 'Idempotent-Replayed': 'true' } : {}),
    },
    body: outcome.body,
    loseResponse,
  };
}

async function route(provider: PaymentProvider, request: ProviderRequest): Promise<Outcome> {
  if (request.path !== '/charges' && request.path !== '/charges/') {
    return errorOutcome(
      404,
      'invalid_request_error',
      `Unrecognized request URL (${request.method} ${request.path})`,
    );
  }
  if (request.method !== 'POST') {
    return errorOutcome(
      405,
      'invalid_request_error',
      `${request.method} /charges is not supported: use POST`,
    );
  }
  const pause = pauseOf(request.headers[FAULT_HEADERS.pauseMs]);
  if (typeof pause === 'string') return errorOutcome(400, 'invalid_request_error', pause);
  const key = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (key !== undefined && !v.is(IdempotencyKeySchema, key)) {
    return errorOutcome(
      400,
      'invalid_request_error',
      'Idempotency-Key must be 1–255 printable ASCII characters',
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(request.body);
  } catch {
    return errorOutcome(400, 'invalid_request_error', 'the request body is not valid JSON');
  }
  return createCharge(provider, json, { idempotencyKey: key, pauseMs: pause });
}

function pauseOf(raw: string | undefined): number | string {
  if (raw === undefined) return 0;
  const value = Number(raw);
  return /^[0-9]+$/.test(raw) && value <= MAX_FAULT_PAUSE_MS
    ? value
    : `${FAULT_HEADERS.pauseMs} must be a whole number of milliseconds up to ${MAX_FAULT_PAUSE_MS}`;
}

/**
 * Validates, then executes the charge once per idempotency key. A body that fails validation is
 * answered 400 and NOT saved under the key: Stripe saves a result only once execution began.
 */
export async function createCharge(
  provider: PaymentProvider,
  body: unknown,
  options: { readonly idempotencyKey?: string | undefined; readonly pauseMs?: number } = {},
): Promise<Outcome> {
  const parsed = v.safeParse(ChargeRequestSchema, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const param = v.getDotPath(issue) ?? '(body)';
    return errorOutcome(400, 'invalid_request_error', `${param}: ${issue.message}`, { param });
  }
  const request = { ...parsed.output, source: parsed.output.source ?? SOURCES.visa };
  if (options.idempotencyKey === undefined) {
    const outcome = executionOutcome(provider, request, undefined);
    if (outcome.charge) await putCharge(provider, outcome.charge);
    return outcome;
  }
  const held = await takeKey(provider, options.idempotencyKey, fingerprint(request));
  if ('status' in held) return held;
  if (options.pauseMs) await sleep(options.pauseMs);
  return executeUnderLease(provider, request, options.idempotencyKey, held.leaseId);
}

type ValidRequest = Omit<v.InferOutput<typeof ChargeRequestSchema>, 'source'> & {
  readonly source: (typeof SOURCES)[keyof typeof SOURCES];
};

/** The parameters a key is bound to (the default source resolved), so a repeat can be compared. */
export function fingerprint(request: ValidRequest): string {
  const { account, amountCents, currency, source, metadata } = request;
  const canonical = [account, amountCents, currency, source, metadata.runId, metadata.mode, metadata.eventId];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

const nowOf = (provider: PaymentProvider): number => provider.now?.() ?? Date.now();
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
async function takeKey(
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

function keyInUse(idempotencyKey: string): Outcome {
  return errorOutcome(
    409,
    'invalid_request_error',
    'There is currently another in-progress request using this Idempotent Key (that probably means you ' +
      `submitted twice, and the other request is still going through): ${idempotencyKey}. Please try again later.`,
    { code: 'idempotency_key_in_use' },
  );
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

interface Execution extends Outcome {
  readonly charge?: Record<string, unknown>;
}

/** What executing the charge produces: the charge and its 200, or a decline (no charge). */
function executionOutcome(
  provider: PaymentProvider,
  request: ValidRequest,
  idempotencyKey: string | undefined,
): Execution {
  if (request.source === SOURCES.declined) {
    return errorOutcome(402, 'card_error', 'Your card was declined.', {
      code: 'card_declined',
      decline_code: 'generic_decline',
    });
  }
  const now = nowOf(provider);
  const chargeId = `ch_${randomBytes(12).toString('base64url')}`;
  const { account, amountCents, currency, metadata } = request;
  const created = Math.floor(now / 1000);
  return {
    status: 200,
    body: JSON.stringify({
      id: chargeId,
      object: 'charge',
      amountCents,
      currency,
      account,
      metadata,
      created,
    }),
    charge: {
      pk: chargesPartition(metadata.runId),
      sk: `${CHARGE_SK_PREFIX}${chargeId}`,
      chargeId,
      account,
      amountCents,
      currency,
      runId: metadata.runId,
      mode: metadata.mode,
      eventId: metadata.eventId,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      createdAt: new Date(now).toISOString(),
      [PROVIDER_TTL_ATTRIBUTE]: created + CHARGE_RETENTION_SECONDS,
    },
  };
}

async function putCharge(provider: PaymentProvider, charge: Record<string, unknown>): Promise<void> {
  await provider.ddb.send(new PutCommand({ TableName: provider.tableName, Item: charge }));
}

/**
 * The charge and the key's completion in ONE transaction, conditional on still holding the lease:
 * a provider killed before it committed charged nothing and left the key in flight (a repeat takes
 * it over once the lease expires); one killed after left a completed key (a repeat replays).
 */
async function executeUnderLease(
  provider: PaymentProvider,
  request: ValidRequest,
  idempotencyKey: string,
  leaseId: string,
): Promise<Outcome> {
  const outcome = executionOutcome(provider, request, idempotencyKey);
  const complete = {
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
  const charge = outcome.charge
    ? [
        {
          Put: {
            TableName: provider.tableName,
            Item: outcome.charge,
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ]
    : [];
  try {
    await provider.ddb.send(new TransactWriteCommand({ TransactItems: [complete, ...charge] }));
  } catch (error) {
    // Our lease expired and another request took the key over: it executes, we must not. The
    // client's retry will find its saved response.
    if (isCancelledByCondition(error)) return keyInUse(idempotencyKey);
    throw error;
  }
  return { status: outcome.status, body: outcome.body };
}

/** A charge as the verifier reads it. */
export interface ChargeRecord {
  readonly chargeId: string;
  readonly account: string;
  readonly amountCents: number;
  readonly currency: string;
  readonly runId: string;
  readonly mode: string;
  readonly eventId: string;
  readonly idempotencyKey?: string;
  /** ISO 8601, UTC. */
  readonly createdAt: string;
}

/** Every charge the provider executed for a run (paginated Query of the run's partition). */
export async function* listCharges(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  runId: string,
): AsyncGenerator<ChargeRecord> {
  const pages = paginateQuery(
    { client: ddb },
    {
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': chargesPartition(runId), ':prefix': CHARGE_SK_PREFIX },
      ConsistentRead: true,
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) yield chargeRecordOf(item);
  }
}

function chargeRecordOf(item: Record<string, unknown>): ChargeRecord {
  const text = (name: string): string => {
    const value = item[name];
    if (typeof value !== 'string') throw new Error(`charge item ${String(item.sk)} has no string ${name}`);
    return value;
  };
  const amountCents = item.amountCents;
  if (typeof amountCents !== 'number') throw new Error(`charge item ${String(item.sk)} has no amountCents`);
  return {
    chargeId: text('chargeId'),
    account: text('account'),
    amountCents,
    currency: text('currency'),
    runId: text('runId'),
    mode: text('mode'),
    eventId: text('eventId'),
    ...(typeof item.idempotencyKey === 'string' ? { idempotencyKey: item.idempotencyKey } : {}),
    createdAt: text('createdAt'),
  };
}

function errorOutcome(
  status: number,
  type: string,
  message: string,
  extra: Record<string, string> = {},
): Outcome {
  return { status, body: JSON.stringify({ error: { type, ...extra, message } }) };
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

function isCancelledByCondition(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons;
  return reasons?.[0]?.Code === 'ConditionalCheckFailed';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * A stand-in payment provider that behaves like a real one: Stripe's idempotency keys are the
 * reference (https://docs.stripe.com/api/idempotent_requests). Both transports — the Lambda handler
 * behind a Function URL (handler.ts) and the embedded node:http server (http-server.ts) — call
 * {@link serveRequest}, so they cannot drift apart. The request and its answers are in
 * charge-request.ts, the keys in idempotency-keys.ts, the executed charges in charge-ledger.ts, the
 * table's layout in provider-table.ts.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { chargeItem, putCharge } from './charge-ledger.js';
import {
  errorOutcome,
  FAULT_HEADERS,
  fingerprint,
  IDEMPOTENCY_KEY_HEADER,
  isIdempotencyKey,
  type Outcome,
  type ProviderRequest,
  type ProviderResponse,
  pauseOf,
  SOURCES,
  type ValidRequest,
  validChargeRequest,
} from './charge-request.js';
import { keyCompletion, keyInUse, takeKey } from './idempotency-keys.js';
import { nowOf, type PaymentProvider } from './provider-table.js';

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
  if (key !== undefined && !isIdempotencyKey(key)) {
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

/**
 * Validates, then executes the charge once per idempotency key. A body that fails validation is
 * answered 400 and NOT saved under the key: Stripe saves a result only once execution began.
 */
export async function createCharge(
  provider: PaymentProvider,
  body: unknown,
  options: { readonly idempotencyKey?: string | undefined; readonly pauseMs?: number } = {},
): Promise<Outcome> {
  const request = validChargeRequest(body);
  if ('status' in request) return request;
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
    charge: chargeItem(chargeId, request, idempotencyKey, now, created),
  };
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
  const complete = keyCompletion(provider, idempotencyKey, leaseId, outcome);
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

function isCancelledByCondition(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons;
  return reasons?.[0]?.Code === 'ConditionalCheckFailed';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

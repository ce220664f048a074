/**
 * What the stand-in payment provider reads and answers: the request and its headers (idempotency key,
 * test-only fault hooks), the charge body's validation, and answers in Stripe's shape.
 */
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { IdentifierSchema, MAX_AMOUNT_CENTS } from '../../contract/message.js';

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

export const SOURCES = {
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

export const isIdempotencyKey = (key: string): boolean => v.is(IdempotencyKeySchema, key);

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

/** An answer before the transport shapes it: a replay is marked as one. */
export interface Outcome {
  readonly status: number;
  readonly body: string;
  readonly replayed?: boolean;
}

export function errorOutcome(
  status: number,
  type: string,
  message: string,
  extra: Record<string, string> = {},
): Outcome {
  return { status, body: JSON.stringify({ error: { type, ...extra, message } }) };
}

/** The pause `x-fault-pause-ms` asks for, 0 without one, or why the header is refused. */
export function pauseOf(raw: string | undefined): number | string {
  if (raw === undefined) return 0;
  const value = Number(raw);
  return /^[0-9]+$/.test(raw) && value <= MAX_FAULT_PAUSE_MS
    ? value
    : `${FAULT_HEADERS.pauseMs} must be a whole number of milliseconds up to ${MAX_FAULT_PAUSE_MS}`;
}

export type ValidRequest = Omit<v.InferOutput<typeof ChargeRequestSchema>, 'source'> & {
  readonly source: (typeof SOURCES)[keyof typeof SOURCES];
};

/** The body as a charge (the default source resolved), or its 400 naming the first invalid field. */
export function validChargeRequest(body: unknown): ValidRequest | Outcome {
  const parsed = v.safeParse(ChargeRequestSchema, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const param = v.getDotPath(issue) ?? '(body)';
    return errorOutcome(400, 'invalid_request_error', `${param}: ${issue.message}`, { param });
  }
  return { ...parsed.output, source: parsed.output.source ?? SOURCES.visa };
}

/** The parameters a key is bound to (the default source resolved), so a repeat can be compared. */
export function fingerprint(request: ValidRequest): string {
  const { account, amountCents, currency, source, metadata } = request;
  const canonical = [account, amountCents, currency, source, metadata.runId, metadata.mode, metadata.eventId];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

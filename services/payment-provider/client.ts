import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * The client the charge consumers use to call the payment provider (services/payment-provider/):
 * retries a request whose outcome it cannot know — a network error, a timeout, a 5xx, a 409 (the
 * key is in use by a request that may yet finish) — and with an idempotency key sends the SAME key
 * every time, so the provider executes it at most once. Without a key each retry is a new request,
 * which is exactly how a lost response becomes a second charge.
 */

/** What a consumer asks to charge; the provider validates it (charge-request.ts, beside this file). */
export interface ChargeRequest {
  readonly account: string;
  readonly amountCents: number;
  readonly currency: string;
  /** A Stripe test token. @default 'tok_visa' (the provider's default) */
  readonly source?: string;
  readonly metadata: { readonly runId: string; readonly mode: string; readonly eventId: string };
}

export interface ChargeOptions {
  readonly idempotencyKey?: string;
  /**
   * Test-only fault: true for an attempt (1-based) sends `x-fault-lose-response: 1`, and the
   * stand-in provider executes the charge and then loses its response.
   */
  readonly loseResponse?: (attempt: number) => boolean;
}

export interface ChargeResult {
  readonly chargeId: string;
  /** The provider answered with a response it saved for this key earlier (`Idempotent-Replayed`). */
  readonly replayed: boolean;
  /** Requests sent, this one included. */
  readonly attempts: number;
}

export interface PaymentClient {
  charge(request: ChargeRequest, options?: ChargeOptions): Promise<ChargeResult>;
}

/** What a charge mode needs besides a consumer's deps: the provider, and its fault. */
export interface ChargeDeps {
  readonly payments: PaymentClient;
  /** Probability, per request, that the provider executes the charge and its response is lost. */
  readonly lostResponseRate: number;
}

export interface PaymentClientOptions {
  /** The provider's base URL (a Function URL, or the embedded server's); `/charges` is appended. */
  readonly url: string;
  /** Per attempt. @default 2000 */
  readonly timeoutMs?: number;
  /** Requests in all, the first included. @default 4 */
  readonly attempts?: number;
  /** Sign with SigV4 for service `lambda`, as a Function URL with AWS_IAM auth requires. */
  readonly sign: boolean;
  /** The region to sign for. @default the region in a Function URL's host, else AWS_REGION */
  readonly region?: string;
  /** @default the SDK's default credential chain */
  readonly credentials?: SigningCredentials;
  /** The first retry's backoff ceiling; each next one doubles it (full jitter). @default 100 */
  readonly baseDelayMs?: number;
  /** Sends each attempt (the explorer faults attempts through it). @default the global fetch */
  readonly fetch?: typeof fetch;
}

type SigningCredentials = ConstructorParameters<typeof SignatureV4>[0]['credentials'];

const DEFAULTS = { timeoutMs: 2000, attempts: 4, baseDelayMs: 100 } as const;
const MAX_DELAY_MS = 2000;

/** The provider declined the card after execution began (402): final, a retry would be declined too. */
export class ChargeDeclinedError extends Error {
  override readonly name = 'ChargeDeclinedError';
  constructor(
    readonly code: string | undefined,
    message: string,
    readonly attempts: number,
  ) {
    super(`the card was declined (${code ?? 'no code'}): ${message}`);
  }
}

/**
 * The provider refused the request (400, or another 4xx it will not change its mind about): a
 * malformed charge, or an idempotency key reused with other parameters (`type: idempotency_error`).
 */
export class ChargeRejectedError extends Error {
  override readonly name = 'ChargeRejectedError';
  constructor(
    readonly status: number,
    readonly type: string | undefined,
    message: string,
    readonly attempts: number,
  ) {
    super(`the provider rejected the charge (${status} ${type ?? 'no error type'}): ${message}`);
  }
}

/** Every attempt failed in a way that may be temporary; the charge may or may not have been made. */
export class ProviderUnavailableError extends Error {
  override readonly name = 'ProviderUnavailableError';
  constructor(
    readonly url: string,
    readonly attempts: number,
    lastCause: string,
    options?: { cause?: unknown },
  ) {
    super(
      `the payment provider at ${url} did not complete the charge in ${attempts} attempt(s); last: ${lastCause}. ` +
        (/\b409\b|idempotency_key_in_use/.test(lastCause)
          ? 'The key is still in flight at the provider (another request holds it until its lease ends): retry after the lease with the same key.'
          : 'Is it running, and reachable from here? Retry later with the same idempotency key.'),
      options,
    );
  }
}

/** Why an attempt is worth repeating, or its final answer. */
type AttemptOutcome =
  | { readonly kind: 'done'; readonly result: Omit<ChargeResult, 'attempts'> }
  | { readonly kind: 'final'; readonly error: Error }
  | { readonly kind: 'retry'; readonly cause: string; readonly error?: unknown };

export function createPaymentClient(options: PaymentClientOptions): PaymentClient {
  const endpoint = new URL('charges', options.url.endsWith('/') ? options.url : `${options.url}/`);
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  const attempts = options.attempts ?? DEFAULTS.attempts;
  const baseDelayMs = options.baseDelayMs ?? DEFAULTS.baseDelayMs;
  const send = options.fetch ?? fetch;
  if (!(Number.isInteger(attempts) && attempts >= 1)) {
    throw new RangeError(`attempts must be a whole number, at least 1 (got ${attempts})`);
  }
  const signer = options.sign
    ? new SignatureV4({
        service: 'lambda',
        region: options.region ?? signingRegionOf(endpoint),
        credentials: options.credentials ?? defaultProvider(),
        sha256: Sha256,
      })
    : undefined;

  const attempt = async (
    body: string,
    headers: Record<string, string>,
    n: number,
  ): Promise<AttemptOutcome> => {
    const signed = signer ? await signedHeaders(signer, endpoint, body, headers) : headers;
    let response: Response;
    let text: string;
    try {
      response = await send(endpoint, {
        method: 'POST',
        headers: signed,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const cause =
        error instanceof Error && error.name === 'TimeoutError'
          ? `no answer within ${timeoutMs} ms`
          : `network error: ${describe(error)}`;
      return { kind: 'retry', cause, error };
    }
    return outcomeOf(response.status, text, response.headers.get('idempotent-replayed') === 'true', n);
  };

  return {
    async charge(request, chargeOptions = {}) {
      const body = JSON.stringify(request);
      let last: Extract<AttemptOutcome, { kind: 'retry' }> | undefined;
      for (let n = 1; n <= attempts; n += 1) {
        if (n > 1) await backoff(baseDelayMs, n - 1);
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          ...(chargeOptions.idempotencyKey === undefined
            ? {}
            : { 'idempotency-key': chargeOptions.idempotencyKey }),
          ...(chargeOptions.loseResponse?.(n) ? { 'x-fault-lose-response': '1' } : {}),
        };
        const outcome = await attempt(body, headers, n);
        if (outcome.kind === 'done') return { ...outcome.result, attempts: n };
        if (outcome.kind === 'final') throw outcome.error;
        last = outcome;
      }
      throw new ProviderUnavailableError(endpoint.href, attempts, last?.cause ?? 'unknown', {
        cause: last?.error,
      });
    },
  };
}

function outcomeOf(status: number, text: string, replayed: boolean, attempts: number): AttemptOutcome {
  const json = parseJson(text);
  if (status === 200) {
    const id = field(json, 'id');
    if (typeof id === 'string' && id.startsWith('ch_'))
      return { kind: 'done', result: { chargeId: id, replayed } };
    return { kind: 'retry', cause: `200 without a charge id: ${bounded(text)}` };
  }
  const error = field(json, 'error');
  const type = stringField(error, 'type');
  const message = stringField(error, 'message') ?? bounded(text);
  // 409: another request holds the key and may yet finish; 429: throttled. Both may go away.
  if (status >= 500 || status === 409 || status === 429) {
    return { kind: 'retry', cause: `${status} ${type ?? ''}: ${message}`.replace('  ', ' ') };
  }
  if (status === 402) {
    return { kind: 'final', error: new ChargeDeclinedError(stringField(error, 'code'), message, attempts) };
  }
  return { kind: 'final', error: new ChargeRejectedError(status, type, message, attempts) };
}

/**
 * SigV4 for a Function URL with AWS_IAM auth: service `lambda`, the URL's host signed, and the
 * body's SHA-256 in `x-amz-content-sha256` (the signer adds it), as AWS documents for POST.
 */
async function signedHeaders(
  signer: SignatureV4,
  endpoint: URL,
  body: string,
  headers: Record<string, string>,
): Promise<Record<string, string>> {
  const query = Object.fromEntries(endpoint.searchParams);
  const signed = await signer.sign({
    method: 'POST',
    protocol: endpoint.protocol,
    hostname: endpoint.hostname,
    ...(endpoint.port ? { port: Number(endpoint.port) } : {}),
    path: endpoint.pathname,
    query,
    headers: { ...headers, host: endpoint.host },
    body,
  });
  return signed.headers;
}

/** `<url-id>.lambda-url.<region>.on.aws`; any other host signs for AWS_REGION. */
export function signingRegionOf(
  endpoint: URL,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const fromHost = /\.lambda-url\.([a-z0-9-]+)\.on\.aws$/.exec(endpoint.hostname)?.[1];
  const region = fromHost ?? env.AWS_REGION;
  if (region === undefined || region === '') {
    throw new RangeError(
      `cannot tell which region to sign requests to ${endpoint.host} for: pass region, or set AWS_REGION`,
    );
  }
  return region;
}

function backoff(baseDelayMs: number, retry: number): Promise<void> {
  const ceiling = Math.min(MAX_DELAY_MS, baseDelayMs * 2 ** (retry - 1));
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

function stringField(value: unknown, name: string): string | undefined {
  const found = field(value, name);
  return typeof found === 'string' ? found : undefined;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch reports "fetch failed" and puts what happened (ECONNREFUSED, a socket closed) in cause.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

function bounded(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

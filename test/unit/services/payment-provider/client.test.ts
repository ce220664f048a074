import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ChargeDeclinedError,
  ChargeRejectedError,
  createPaymentClient,
  ProviderUnavailableError,
  signingRegionOf,
} from '../../../../services/payment-provider/client.js';

/**
 * A scripted provider on loopback: each request gets the next scripted answer (`lose` closes the
 * socket unanswered, `hang` never answers), and every request's headers and body are recorded.
 */
type Answer = { status: number; body: unknown; headers?: Record<string, string> } | 'lose' | 'hang';

let server: Server;
let url: string;
let script: Answer[];
let received: { headers: IncomingHttpHeaders; body: string }[];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = script.shift() ?? {
        status: 500,
        body: { error: { type: 'api_error', message: 'unscripted' } },
      };
      if (answer === 'lose') return void request.socket.destroy();
      if (answer === 'hang') return;
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  script = [];
  received = [];
});

const REQUEST = {
  account: 'acct-1',
  amountCents: 500,
  currency: 'usd',
  metadata: { runId: 'run-1', mode: 'charge-with-key', eventId: 'e-1' },
} as const;

const charged = (id = 'ch_1', headers: Record<string, string> = {}): Answer => ({
  status: 200,
  body: { id, object: 'charge' },
  headers,
});
const failure = (status: number, type: string, extra: Record<string, string> = {}): Answer => ({
  status,
  body: { error: { type, message: `${type} from the script`, ...extra } },
});

/** Signs the received request again, over the headers it says it signed, at the date it carries. */
async function resign(headers: IncomingHttpHeaders, body: string): Promise<string | undefined> {
  const signedNames = /SignedHeaders=([^,]+)/.exec(headers.authorization ?? '')?.[1]?.split(';') ?? [];
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(String(headers['x-amz-date']));
  if (date === null) return undefined;
  const [, y, mo, d, h, mi, se] = date;
  const signer = new SignatureV4({
    service: 'lambda',
    region: 'eu-west-1',
    credentials: CREDENTIALS,
    sha256: Sha256,
  });
  const { port } = new URL(url);
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: Number(port),
      path: '/charges',
      query: {},
      headers: Object.fromEntries(signedNames.map((name) => [name, String(headers[name])])),
      body,
    },
    { signingDate: new Date(`${y}-${mo}-${d}T${h}:${mi}:${se}Z`) },
  );
  return signed.headers.authorization;
}

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'session-token' };

const client = (overrides: Partial<Parameters<typeof createPaymentClient>[0]> = {}) =>
  createPaymentClient({ url, sign: false, baseDelayMs: 1, timeoutMs: 500, ...overrides });

describe('createPaymentClient', () => {
  it('charges: posts the request as JSON to <url>/charges and returns the charge id', async () => {
    script = [charged('ch_abc')];
    await expect(client().charge(REQUEST)).resolves.toEqual({
      chargeId: 'ch_abc',
      replayed: false,
      attempts: 1,
    });
    expect(JSON.parse(received[0]?.body ?? '')).toEqual(REQUEST);
  });

  it('reports a replay when the provider says Idempotent-Replayed', async () => {
    script = [charged('ch_abc', { 'Idempotent-Replayed': 'true' })];
    await expect(client().charge(REQUEST, { idempotencyKey: 'k' })).resolves.toMatchObject({
      replayed: true,
    });
  });

  it('retries a 5xx, a 409, a lost connection and a timeout, sending the SAME key every time', async () => {
    script = [failure(503, 'api_error'), failure(409, 'invalid_request_error'), 'lose', 'hang', charged()];
    const result = await client({ attempts: 5, timeoutMs: 300 }).charge(REQUEST, {
      idempotencyKey: 'run-1:e-1',
    });
    expect(result).toEqual({ chargeId: 'ch_1', replayed: false, attempts: 5 });
    expect(received.map((request) => request.headers['idempotency-key'])).toEqual(Array(5).fill('run-1:e-1'));
  });

  it('without a key, retries as new requests that carry no key', async () => {
    script = ['lose', charged()];
    await expect(client().charge(REQUEST)).resolves.toMatchObject({ attempts: 2 });
    expect(received).toHaveLength(2);
    for (const request of received) expect(request.headers['idempotency-key']).toBeUndefined();
  });

  it('asks the provider to lose the response only on the attempts loseResponse picks', async () => {
    script = [charged(), charged()];
    // The scripted server ignores the header; the header is what is checked.
    await client().charge(REQUEST, { idempotencyKey: 'k', loseResponse: (attempt) => attempt === 1 });
    await client().charge(REQUEST, { idempotencyKey: 'k', loseResponse: () => false });
    expect(received.map((request) => request.headers['x-fault-lose-response'])).toEqual(['1', undefined]);
  });

  it('a 402 is final: ChargeDeclinedError with the decline code, no retry', async () => {
    script = [failure(402, 'card_error', { code: 'card_declined' }), charged()];
    const error = await client()
      .charge(REQUEST, { idempotencyKey: 'k' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ChargeDeclinedError);
    expect(error).toMatchObject({ code: 'card_declined', attempts: 1 });
    expect(received).toHaveLength(1);
  });

  it('a 400 is final: ChargeRejectedError, an idempotency_error included, no retry', async () => {
    script = [failure(400, 'idempotency_error'), charged()];
    const error = await client()
      .charge(REQUEST, { idempotencyKey: 'k' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ChargeRejectedError);
    expect(error).toMatchObject({ status: 400, type: 'idempotency_error', attempts: 1 });
    expect(received).toHaveLength(1);
  });

  it('attempts exhausted: ProviderUnavailableError naming the URL and the last cause', async () => {
    script = [failure(500, 'api_error'), failure(502, 'api_error'), failure(409, 'invalid_request_error')];
    const error = await client({ attempts: 3 })
      .charge(REQUEST, { idempotencyKey: 'k' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect((error as Error).message).toContain(`${url}/charges`);
    expect((error as Error).message).toContain('409 invalid_request_error');
    expect(received).toHaveLength(3);
  });

  it('a provider that is not listening: ProviderUnavailableError saying it is a network error', async () => {
    const closed = createPaymentClient({
      url: 'http://127.0.0.1:1',
      sign: false,
      attempts: 2,
      baseDelayMs: 1,
    });
    await expect(closed.charge(REQUEST)).rejects.toThrow(/127\.0\.0\.1:1\/charges.*network error/);
  });

  describe('signing', () => {
    const credentials = {
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'session-token',
    };

    it('signs each request with SigV4 for lambda, the body hash in x-amz-content-sha256', async () => {
      script = [failure(503, 'api_error'), charged()];
      await client({ sign: true, region: 'eu-west-1', credentials }).charge(REQUEST, { idempotencyKey: 'k' });
      expect(received).toHaveLength(2);
      for (const { headers, body } of received) {
        expect(headers.authorization).toMatch(
          /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-content-sha256[^,]*, Signature=[0-9a-f]{64}$/,
        );
        expect(headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
        expect(headers['x-amz-content-sha256']).toBe(createHash('sha256').update(body).digest('hex'));
        expect(headers['x-amz-security-token']).toBe('session-token');
        // The key is signed too: it cannot be swapped on the way.
        expect(headers.authorization).toContain('idempotency-key');
        // What arrived (fetch's own host header included) verifies: signing it again gives the same.
        expect(await resign(headers, body)).toBe(headers.authorization);
      }
    });

    it('sends no signature headers when not signing', async () => {
      script = [charged()];
      await client({ sign: false }).charge(REQUEST);
      const headers = received[0]?.headers ?? {};
      for (const name of ['authorization', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token']) {
        expect(headers[name], name).toBeUndefined();
      }
    });

    it('signs for the region in a Function URL host, else AWS_REGION, else refuses to guess', () => {
      const at = (href: string, env: Record<string, string | undefined>) =>
        signingRegionOf(new URL(href), env);
      expect(at('https://abc123.lambda-url.ap-southeast-2.on.aws/', { AWS_REGION: 'eu-west-1' })).toBe(
        'ap-southeast-2',
      );
      expect(at('http://127.0.0.1:8080/', { AWS_REGION: 'eu-west-1' })).toBe('eu-west-1');
      expect(() => at('http://127.0.0.1:8080/', {})).toThrow(/pass region, or set AWS_REGION/);
    });
  });
});

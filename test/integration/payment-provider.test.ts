import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningPaymentProvider,
  startPaymentProvider,
} from '../../harness/local-aws/emulators/payment-provider.js';
import { type ChargeRecord, listCharges } from '../../services/payment-provider/charge-ledger.js';
import { serveRequest } from '../../services/payment-provider/charges.js';
import { createPaymentClient } from '../../services/payment-provider/client.js';
import { ensureProviderTable } from '../../services/payment-provider/http-server.js';
import { KEY_RETENTION_SECONDS } from '../../services/payment-provider/idempotency-keys.js';
import { keyItemKey, type PaymentProvider } from '../../services/payment-provider/provider-table.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

const dynamodb = await sharedDynamoDb('payment-provider');
const TABLE = `${dynamodb.tablePrefix}payment-provider`;
let client: DynamoDBClient;
let ddb: DynamoDBDocumentClient;
let provider: RunningPaymentProvider;

beforeAll(async () => {
  client = new DynamoDBClient({
    endpoint: dynamodb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  ddb = DynamoDBDocumentClient.from(client);
  provider = await startPaymentProvider({ dynamodbEndpoint: dynamodb.endpoint, tableName: TABLE });
});

afterAll(async () => {
  await provider?.stop();
  client?.destroy();
});

/** A charge of its own run, so each test counts its own charges. */
function chargeBody(overrides: Record<string, unknown> = {}) {
  const runId = `run-${randomUUID()}`;
  return {
    runId,
    body: {
      account: 'acct-1',
      amountCents: 1250,
      currency: 'usd',
      metadata: { runId, mode: 'test', eventId: 'e-1' },
      ...overrides,
    },
  };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/charges`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    text: await response.text(),
  };
}

async function chargesOf(runId: string, table = TABLE): Promise<ChargeRecord[]> {
  const charges: ChargeRecord[] = [];
  for await (const charge of listCharges(ddb, table, runId)) charges.push(charge);
  return charges;
}

describe('the payment provider, a child process on DynamoDB Local', () => {
  it('replays a saved success byte for byte, with Idempotent-Replayed, and charges once', async () => {
    const { runId, body } = chargeBody();
    const key = randomUUID();
    const first = await post(provider.url, body, { 'idempotency-key': key });
    const second = await post(provider.url, body, { 'idempotency-key': key });

    expect(first.status).toBe(200);
    expect(first.replayed).toBeNull();
    expect(second).toEqual({ status: 200, replayed: 'true', text: first.text });
    const charges = await chargesOf(runId);
    expect(charges).toEqual([
      expect.objectContaining({
        chargeId: JSON.parse(first.text).id,
        account: 'acct-1',
        amountCents: 1250,
        currency: 'usd',
        runId,
        mode: 'test',
        eventId: 'e-1',
        idempotencyKey: key,
      }),
    ]);
  });

  it('replays a decline raised after execution began (402, saved under the key), and charges nothing', async () => {
    const { runId, body } = chargeBody({ source: 'tok_chargeDeclined' });
    const key = randomUUID();
    const first = await post(provider.url, body, { 'idempotency-key': key });
    const second = await post(provider.url, body, { 'idempotency-key': key });

    expect(first.status).toBe(402);
    expect(JSON.parse(first.text).error).toMatchObject({ type: 'card_error', code: 'card_declined' });
    expect(second).toEqual({ status: 402, replayed: 'true', text: first.text });
    expect(await chargesOf(runId)).toEqual([]);
  });

  it('without a key, every request is a new charge', async () => {
    const { runId, body } = chargeBody();
    const [a, b] = [await post(provider.url, body), await post(provider.url, body)];
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(JSON.parse(a.text).id).not.toBe(JSON.parse(b.text).id);
    expect(await chargesOf(runId)).toHaveLength(2);
  });

  it('refuses the same key with other parameters (400 idempotency_error), and keeps the first result', async () => {
    const { runId, body } = chargeBody();
    const key = randomUUID();
    const first = await post(provider.url, body, { 'idempotency-key': key });
    const other = await post(provider.url, { ...body, amountCents: 9999 }, { 'idempotency-key': key });

    expect(other.status).toBe(400);
    expect(JSON.parse(other.text).error.type).toBe('idempotency_error');
    expect(JSON.parse(other.text).error.message).toContain(
      'Keys for idempotent requests can only be used with the same parameters they were first used with',
    );
    expect(await post(provider.url, body, { 'idempotency-key': key })).toMatchObject({
      text: first.text,
      replayed: 'true',
    });
    expect(await chargesOf(runId)).toHaveLength(1);
  });

  it('does not save a malformed request under its key: the key stays free for a valid one', async () => {
    const { runId, body } = chargeBody();
    const key = randomUUID();
    const malformed = await post(provider.url, { ...body, amountCents: -5 }, { 'idempotency-key': key });
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'amountCents',
    });

    const valid = await post(provider.url, body, { 'idempotency-key': key });
    expect(valid).toMatchObject({ status: 200, replayed: null });
    expect(await chargesOf(runId)).toHaveLength(1);
  });

  it('a lost response: the client retries with the same key and gets the replay (one charge); without a key, two', async () => {
    const payments = createPaymentClient({ url: provider.url, sign: false, baseDelayMs: 10 });
    const withKey = chargeBody();
    const keyed = await payments.charge(withKey.body, {
      idempotencyKey: randomUUID(),
      loseResponse: (attempt) => attempt === 1,
    });
    expect(keyed).toMatchObject({ replayed: true, attempts: 2 });
    expect((await chargesOf(withKey.runId)).map((charge) => charge.chargeId)).toEqual([keyed.chargeId]);

    const withoutKey = chargeBody();
    const unkeyed = await payments.charge(withoutKey.body, { loseResponse: (attempt) => attempt === 1 });
    expect(unkeyed).toMatchObject({ replayed: false, attempts: 2 });
    const charges = await chargesOf(withoutKey.runId);
    expect(charges).toHaveLength(2);
    expect(charges.map((charge) => charge.chargeId)).toContain(unkeyed.chargeId);
  });

  it('in flight: a repeat gets 409; after a SIGKILL mid-request a restarted provider answers 409 until the lease expires, then executes once', async () => {
    const leaseSeconds = 3;
    const first = await startPaymentProvider({
      dynamodbEndpoint: dynamodb.endpoint,
      tableName: TABLE,
      leaseSeconds,
    });
    let restarted: RunningPaymentProvider | undefined;
    try {
      const { runId, body } = chargeBody();
      const key = randomUUID();
      const paused = post(first.url, body, { 'idempotency-key': key, 'x-fault-pause-ms': '30000' }).catch(
        (error: unknown) => error,
      );
      const lockedUntil = await leaseOf(key);

      const repeat = await post(first.url, body, { 'idempotency-key': key });
      expect(repeat.status).toBe(409);
      expect(JSON.parse(repeat.text).error.code).toBe('idempotency_key_in_use');
      // Other parameters are refused as such, in flight too.
      expect((await post(first.url, { ...body, amountCents: 1 }, { 'idempotency-key': key })).status).toBe(
        400,
      );

      first.kill();
      expect(await paused).toBeInstanceOf(Error);
      await first.stop();
      restarted = await startPaymentProvider({
        dynamodbEndpoint: dynamodb.endpoint,
        tableName: TABLE,
        leaseSeconds,
      });

      const answers: { status: number; at: number; text: string }[] = [];
      for (;;) {
        const answer = await post(restarted.url, body, { 'idempotency-key': key });
        answers.push({ status: answer.status, at: Date.now(), text: answer.text });
        if (answer.status !== 409) break;
        await sleep(200);
      }
      const last = answers.at(-1);
      const conflicts = answers.slice(0, -1);
      expect(conflicts.length).toBeGreaterThan(0);
      for (const conflict of conflicts) expect(conflict.at).toBeLessThan(lockedUntil + 500);
      expect(last?.status).toBe(200);
      expect(last?.at).toBeGreaterThanOrEqual(lockedUntil);
      expect(await chargesOf(runId)).toEqual([
        expect.objectContaining({ chargeId: JSON.parse(last?.text ?? '{}').id }),
      ]);
      // Completed now: the next repeat is the replay.
      expect(await post(restarted.url, body, { 'idempotency-key': key })).toMatchObject({
        status: 200,
        replayed: 'true',
        text: last?.text,
      });
    } finally {
      first.kill();
      await first.stop();
      await restarted?.stop();
    }
  });

  it('a request that outlives its lease while still running cannot commit: the repeat that took the key over charges, once', async () => {
    const leaseSeconds = 1;
    const slow = await startPaymentProvider({
      dynamodbEndpoint: dynamodb.endpoint,
      tableName: TABLE,
      leaseSeconds,
    });
    try {
      const { runId, body } = chargeBody();
      const key = randomUUID();
      // A holds the key and pauses past its lease (alive, not killed).
      const first = post(slow.url, body, { 'idempotency-key': key, 'x-fault-pause-ms': '2500' });
      const lockedUntil = await leaseOf(key);
      await sleep(Math.max(0, lockedUntil - Date.now()) + 200);

      // B comes after A's lease: it takes the key over and executes.
      const takeover = await post(slow.url, body, { 'idempotency-key': key });
      expect(takeover.status).toBe(200);
      expect(takeover.replayed).toBeNull();
      // A wakes up without its lease: its commit's condition fails and it charges nothing.
      const late = await first;
      expect(late.status).toBe(409);

      const charges = await chargesOf(runId);
      expect(charges).toHaveLength(1);
      expect(charges[0]?.chargeId).toBe(JSON.parse(takeover.text).id);
      // A's client retries with the key: B's charge, replayed.
      expect(await post(slow.url, body, { 'idempotency-key': key })).toMatchObject({
        status: 200,
        replayed: 'true',
        text: takeover.text,
      });
    } finally {
      await slow.stop();
    }
  });

  it('answers an unknown path with 404 and a clear message', async () => {
    const response = await post(provider.url.replace(/$/, '/v1'), {});
    expect(response.status).toBe(404);
    expect(JSON.parse(response.text).error.message).toContain('Unrecognized request URL');
  });
});

/** The lease of a key once a request holds it (epoch ms); polls until the paused request took it. */
async function leaseOf(key: string): Promise<number> {
  for (let polls = 0; polls < 100; polls += 1) {
    const { Item } = await ddb.send(
      new GetCommand({ TableName: TABLE, Key: keyItemKey(key), ConsistentRead: true }),
    );
    if (Item?.state === 'in-flight') return Number(Item.lockedUntil);
    await sleep(50);
  }
  throw new Error(`no request took key ${key} within 5 s`);
}

describe('key retention, at the core with an injected clock', () => {
  let clock: number;
  let core: PaymentProvider;
  const table = `${dynamodb.tablePrefix}provider-retention`;

  beforeAll(async () => {
    await ensureProviderTable(client, table);
    clock = Date.now();
    core = { ddb, tableName: table, now: () => clock };
  });

  const request = (body: unknown, key: string) =>
    serveRequest(core, {
      method: 'POST',
      path: '/charges',
      headers: { 'idempotency-key': key },
      body: JSON.stringify(body),
    });

  it('replays 23 h 59 min later; past 24 h the key is forgotten and the repeat executes anew', async () => {
    expect(KEY_RETENTION_SECONDS).toBe(24 * 3600);
    const { runId, body } = chargeBody();
    const key = randomUUID();
    const start = clock;
    const first = await request(body, key);
    expect(first.status).toBe(200);

    clock = start + (23 * 3600 + 59 * 60) * 1000;
    const replay = await request(body, key);
    expect(replay).toMatchObject({
      status: 200,
      body: first.body,
      headers: { 'Idempotent-Replayed': 'true' },
    });

    clock = start + (KEY_RETENTION_SECONDS + 1) * 1000;
    const anew = await request(body, key);
    expect(anew.status).toBe(200);
    expect(anew.headers['Idempotent-Replayed']).toBeUndefined();
    expect(JSON.parse(anew.body).id).not.toBe(JSON.parse(first.body).id);
    expect(await chargesOf(runId, table)).toHaveLength(2);
  });
});

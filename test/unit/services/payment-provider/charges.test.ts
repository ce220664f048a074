import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { fingerprint } from '../../../../services/payment-provider/charge-request.js';
import { serveRequest } from '../../../../services/payment-provider/charges.js';
import { readServerArgs } from '../../../../services/payment-provider/http-server.js';
import {
  DEFAULT_LEASE_SECONDS,
  type PaymentProvider,
} from '../../../../services/payment-provider/provider-table.js';

const ddbMock = mockClient(DynamoDBDocumentClient);
const provider: PaymentProvider = {
  ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})),
  tableName: 'provider-test',
  now: () => Date.parse('2026-03-01T12:00:00Z'),
};

const BODY = {
  account: 'acct-1',
  amountCents: 700,
  currency: 'usd',
  metadata: { runId: 'run-1', mode: 'charge-with-key', eventId: 'e-1' },
};

const post = (body: unknown, headers: Record<string, string> = {}) =>
  serveRequest(provider, {
    method: 'POST',
    path: '/charges',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const errorOf = (body: string) => (JSON.parse(body) as { error: Record<string, string> }).error;

beforeEach(() => {
  ddbMock.reset();
});

describe('serveRequest: what is refused before execution begins is never saved', () => {
  it.each([
    ['not JSON', '{', {}],
    ['a negative amount', { ...BODY, amountCents: -1 }, {}],
    ['an unknown field', { ...BODY, extra: true }, {}],
    ['an unknown source token', { ...BODY, source: 'tok_unknown' }, {}],
    ['a currency in capitals', { ...BODY, currency: 'USD' }, {}],
    ['metadata without an event id', { ...BODY, metadata: { runId: 'r', mode: 'm' } }, {}],
    ['an idempotency key with a space', BODY, { 'idempotency-key': 'a key' }],
    ['a pause that is not a number', BODY, { 'x-fault-pause-ms': 'soon' }],
  ])('%s: 400 invalid_request_error, and not one DynamoDB call', async (_, body, headers) => {
    const response = await post(body, { 'idempotency-key': 'k-1', ...headers });
    expect(response.status).toBe(400);
    expect(errorOf(response.body).type).toBe('invalid_request_error');
    expect(ddbMock.calls()).toHaveLength(0);
  });

  it('names the field that failed', async () => {
    const response = await post({ ...BODY, amountCents: 1.5 });
    expect(errorOf(response.body)).toMatchObject({ param: 'amountCents' });
  });

  it('answers any path but /charges with 404, and another method with 405', async () => {
    const elsewhere = await serveRequest(provider, {
      method: 'POST',
      path: '/refunds',
      headers: {},
      body: '{}',
    });
    const get = await serveRequest(provider, { method: 'GET', path: '/charges', headers: {}, body: '' });
    expect([elsewhere.status, get.status]).toEqual([404, 405]);
    expect(ddbMock.calls()).toHaveLength(0);
  });
});

describe('serveRequest: execution', () => {
  it('without a key, writes the charge item only, in the run’s partition', async () => {
    ddbMock.on(PutCommand).resolves({});
    const response = await post(BODY);
    expect(response.status).toBe(200);
    const puts = ddbMock.commandCalls(PutCommand);
    expect(puts).toHaveLength(1);
    expect(puts[0]?.args[0].input.Item).toMatchObject({
      pk: 'CHARGES#run-1',
      chargeId: JSON.parse(response.body).id,
      eventId: 'e-1',
    });
    expect(puts[0]?.args[0].input.Item).not.toHaveProperty('idempotencyKey');
  });

  it('with a key, takes it with a conditional write, then commits charge and completion in ONE transaction on the lease', async () => {
    ddbMock.on(PutCommand).resolves({});
    ddbMock.on(TransactWriteCommand).resolves({});
    const response = await post(BODY, { 'idempotency-key': 'k-1' });
    expect(response.status).toBe(200);

    const take = ddbMock.commandCalls(PutCommand)[0]?.args[0].input;
    expect(take?.ConditionExpression).toBe('attribute_not_exists(pk) OR retainUntil <= :now');
    expect(take?.Item).toMatchObject({
      pk: 'KEY#k-1',
      state: 'in-flight',
      lockedUntil: (provider.now?.() ?? 0) + DEFAULT_LEASE_SECONDS * 1000,
      fingerprint: fingerprint({ ...BODY, source: 'tok_visa' }),
    });
    const items = ddbMock.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(items).toHaveLength(2);
    expect(items[0]?.Update?.ConditionExpression).toBe('leaseId = :lease AND #state = :inFlight');
    expect(items[0]?.Update?.ExpressionAttributeValues?.[':lease']).toBe(take?.Item?.leaseId);
    expect(items[0]?.Update?.ExpressionAttributeValues?.[':body']).toBe(response.body);
    expect(items[1]?.Put?.Item).toMatchObject({ pk: 'CHARGES#run-1', idempotencyKey: 'k-1' });
  });

  it('a decline is saved under the key (402), with no charge item', async () => {
    ddbMock.on(PutCommand).resolves({});
    ddbMock.on(TransactWriteCommand).resolves({});
    const response = await post({ ...BODY, source: 'tok_chargeDeclined' }, { 'idempotency-key': 'k-1' });
    expect(response.status).toBe(402);
    expect(errorOf(response.body)).toMatchObject({ type: 'card_error', code: 'card_declined' });
    const items = ddbMock.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(items.map((item) => Object.keys(item))).toEqual([['Update']]);
  });

  it('binds a key to every parameter, the default source resolved: no source and tok_visa are the same request', async () => {
    ddbMock.on(PutCommand).resolves({});
    ddbMock.on(TransactWriteCommand).resolves({});
    await post(BODY, { 'idempotency-key': 'k-1' });
    await post({ ...BODY, source: 'tok_visa' }, { 'idempotency-key': 'k-1' });
    const [omitted, named] = ddbMock
      .commandCalls(PutCommand)
      .map((call) => call.args[0].input.Item?.fingerprint);
    expect(omitted).toBe(named);
    const other = (change: Record<string, unknown>) =>
      fingerprint({ ...BODY, source: 'tok_visa', ...change });
    for (const change of [
      { account: 'acct-2' },
      { amountCents: 701 },
      { currency: 'eur' },
      { source: 'tok_chargeDeclined' },
      { metadata: { ...BODY.metadata, eventId: 'e-2' } },
    ]) {
      expect(other(change), JSON.stringify(change)).not.toBe(omitted);
    }
  });

  it('answers a DynamoDB failure with 500 api_error, which the client retries', async () => {
    ddbMock.on(PutCommand).rejects(new Error('connection reset'));
    const response = await post(BODY, { 'idempotency-key': 'k-1' });
    expect(response.status).toBe(500);
    expect(errorOf(response.body).type).toBe('api_error');
  });

  it('marks the response to be lost only when x-fault-lose-response is 1', async () => {
    ddbMock.on(PutCommand).resolves({});
    expect((await post(BODY, { 'x-fault-lose-response': '1' })).loseResponse).toBe(true);
    expect((await post(BODY)).loseResponse).toBe(false);
  });
});

describe('the Lambda handler (Function URL, payload 2.0)', () => {
  let handleEvent: typeof import('../../../../services/payment-provider/handler.js').handleEvent;
  let readProviderConfig: typeof import('../../../../services/payment-provider/handler.js').readProviderConfig;
  let ResponseLostError: typeof import('../../../../services/payment-provider/handler.js').ResponseLostError;

  beforeAll(async () => {
    // The handler reads its configuration at module scope.
    vi.stubEnv('PROVIDER_TABLE_NAME', 'provider-test');
    ({ handleEvent, readProviderConfig, ResponseLostError } = await import(
      '../../../../services/payment-provider/handler.js'
    ));
    vi.unstubAllEnvs();
  });

  const event = (
    body: string,
    headers: Record<string, string> = {},
    base64 = false,
  ): APIGatewayProxyEventV2 =>
    ({
      version: '2.0',
      rawPath: '/charges',
      headers,
      body,
      isBase64Encoded: base64,
      requestContext: { http: { method: 'POST', path: '/charges' } },
    }) as unknown as APIGatewayProxyEventV2;

  it('decodes a base64 body and answers with the core’s status, headers and body', async () => {
    ddbMock.on(PutCommand).resolves({});
    const result = await handleEvent(
      provider,
      event(Buffer.from(JSON.stringify(BODY)).toString('base64'), {}, true),
    );
    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({ 'content-type': 'application/json' });
    expect(JSON.parse(String(result.body))).toMatchObject({ object: 'charge', amountCents: 700 });
  });

  it('x-fault-lose-response: commits, then throws (a Function URL answers 502)', async () => {
    ddbMock.on(PutCommand).resolves({});
    ddbMock.on(TransactWriteCommand).resolves({});
    await expect(
      handleEvent(
        provider,
        event(JSON.stringify(BODY), { 'Idempotency-Key': 'k-1', 'X-Fault-Lose-Response': '1' }),
      ),
    ).rejects.toBeInstanceOf(ResponseLostError);
    expect(ddbMock.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('reads its table and lease from the environment; a bad lease fails the cold start', () => {
    expect(readProviderConfig({ PROVIDER_TABLE_NAME: 't' })).toEqual({
      tableName: 't',
      leaseSeconds: DEFAULT_LEASE_SECONDS,
    });
    expect(readProviderConfig({ PROVIDER_TABLE_NAME: 't', PROVIDER_LEASE_SECONDS: '2' }).leaseSeconds).toBe(
      2,
    );
    expect(() => readProviderConfig({ PROVIDER_TABLE_NAME: 't', PROVIDER_LEASE_SECONDS: '0' })).toThrow(
      /PROVIDER_LEASE_SECONDS/,
    );
    expect(() => readProviderConfig({})).toThrow(/PROVIDER_TABLE_NAME/);
  });
});

describe('the http server’s arguments', () => {
  it('takes argv over the environment, port 0 by default', () => {
    expect(
      readServerArgs(['--table-name', 'from-argv', '--lease-seconds', '2'], {
        PROVIDER_TABLE_NAME: 'from-env',
        DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      }),
    ).toEqual({
      port: 0,
      dynamodbEndpoint: 'http://127.0.0.1:8000',
      tableName: 'from-argv',
      leaseSeconds: 2,
    });
  });

  it('says which argument is missing or wrong', () => {
    expect(() => readServerArgs(['--table-name', 't'], {})).toThrow(
      /--dynamodb-endpoint \(or DYNAMODB_ENDPOINT\)/,
    );
    expect(() =>
      readServerArgs(['--table-name', 't', '--dynamodb-endpoint', 'x', '--port', 'http'], {}),
    ).toThrow(/--port/);
  });
});

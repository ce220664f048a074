import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type FunctionResult,
  type FunctionUrlContext,
  type FunctionUrlRequest,
  functionUrlAnswer,
  functionUrlEvent,
} from '../../../../../harness/environments/assembly/function-url.js';
import type { PaymentProvider } from '../../../../../services/payment-provider/provider-table.js';

const TIME = new Date('2020-03-12T19:03:58.390Z');
const context: FunctionUrlContext = {
  accountId: '000000000000',
  urlId: 'abcdefghij0123456789klmnopqrstuv',
  region: 'us-east-1',
  caller: {
    accessKeyId: 'AKIALOCALOPERATOR',
    userArn: 'arn:aws:iam::000000000000:user/operator',
    userId: 'AIDALOCALOPERATOR',
  },
  requestId: 'e1506fd5-9e7b-434f-bd42-4f8fa224b599',
  time: TIME,
};

const post = (overrides: Partial<FunctionUrlRequest> = {}): FunctionUrlRequest => ({
  method: 'POST',
  path: '/charges',
  query: '',
  headers: { 'content-type': 'application/json', 'user-agent': 'aws-sdk-js/3' },
  body: Buffer.from('{"amountCents":700}'),
  ...overrides,
});

describe('functionUrlEvent (payload format 2.0)', () => {
  it('builds the documented request payload for a signed request', () => {
    const event = functionUrlEvent(
      post({
        path: '/my/path',
        query: '?parameter1=value1&parameter1=value2&parameter2=value',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'agent',
          Header2: ['value1', 'value2'],
          Cookie: 'cookie1=a; cookie2=b',
          'X-Absent': undefined,
        },
        body: Buffer.from('{"key1":"value1"}'),
        sourceIp: '123.123.123.123',
      }),
      context,
    );
    expect(event).toEqual({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/my/path',
      rawQueryString: 'parameter1=value1&parameter1=value2&parameter2=value',
      cookies: ['cookie1=a', 'cookie2=b'],
      headers: { 'content-type': 'application/json', 'user-agent': 'agent', header2: 'value1,value2' },
      queryStringParameters: { parameter1: 'value1,value2', parameter2: 'value' },
      requestContext: {
        accountId: '000000000000',
        apiId: context.urlId,
        authentication: null,
        authorizer: {
          iam: {
            accessKey: 'AKIALOCALOPERATOR',
            accountId: '000000000000',
            callerId: 'AIDALOCALOPERATOR',
            cognitoIdentity: null,
            principalOrgId: null,
            userArn: 'arn:aws:iam::000000000000:user/operator',
            userId: 'AIDALOCALOPERATOR',
          },
        },
        domainName: `${context.urlId}.lambda-url.us-east-1.on.aws`,
        domainPrefix: context.urlId,
        http: {
          method: 'POST',
          path: '/my/path',
          protocol: 'HTTP/1.1',
          sourceIp: '123.123.123.123',
          userAgent: 'agent',
        },
        requestId: 'e1506fd5-9e7b-434f-bd42-4f8fa224b599',
        routeKey: '$default',
        stage: '$default',
        time: '12/Mar/2020:19:03:58 +0000',
        timeEpoch: 1584039838390,
      },
      body: '{"key1":"value1"}',
      isBase64Encoded: false,
    });
  });

  it('base64-encodes a binary body; leaves out a body, a query and cookies the request lacks', () => {
    const binary = functionUrlEvent(
      post({ headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([0, 255, 1]) }),
      context,
    );
    expect(binary).toMatchObject({ body: 'AP8B', isBase64Encoded: true });
    const noContentType = functionUrlEvent(post({ headers: {} }), context);
    expect(noContentType.isBase64Encoded).toBe(true);

    const get = functionUrlEvent(post({ method: 'get', headers: {}, body: Buffer.alloc(0) }), context);
    expect(get).toMatchObject({ rawQueryString: '', isBase64Encoded: false });
    for (const field of ['body', 'queryStringParameters', 'cookies', 'pathParameters', 'stageVariables']) {
      expect(get).not.toHaveProperty(field);
    }
    expect(get.requestContext).toMatchObject({ http: { method: 'GET', userAgent: '' } });
  });

  it('names an assumed role as IAM does (AROA…:session); no authorizer for auth type NONE', () => {
    const roleArn = 'arn:aws:sts::111122223333:assumed-role/ChargeRole/DeliverySemantics-Charge';
    const signed = functionUrlEvent(post(), {
      ...context,
      caller: { accessKeyId: 'ASIAFUNCTION', userArn: roleArn },
    });
    const iam = (signed.requestContext as { authorizer: { iam: Record<string, unknown> } }).authorizer.iam;
    expect(iam).toMatchObject({ accessKey: 'ASIAFUNCTION', accountId: '111122223333', userArn: roleArn });
    expect(iam.userId).toMatch(/^AROA[0-9A-F]{17}:DeliverySemantics-Charge$/);
    expect(iam.callerId).toBe(iam.userId);

    const { caller: _, ...anonymous } = context;
    expect(functionUrlEvent(post(), anonymous).requestContext).toMatchObject({ authorizer: null });
  });
});

describe('functionUrlAnswer', () => {
  const ok = (response: unknown): FunctionResult => ({ status: 'ok', response });

  it('answers a result without a statusCode 200, application/json, its JSON', () => {
    expect(functionUrlAnswer(ok('Hello, world!'))).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      cookies: [],
      body: '"Hello, world!"',
    });
    expect(functionUrlAnswer(ok({ message: 'Hello, world!' })).body).toBe('{"message":"Hello, world!"}');
    expect(functionUrlAnswer(ok(undefined)).body).toBe('null');
  });

  it('answers a result with a statusCode with its status, headers, cookies and decoded body', () => {
    const answer = functionUrlAnswer(
      ok({
        statusCode: 201,
        headers: { 'Content-Type': 'application/octet-stream', 'My-Custom-Header': 'Custom Value' },
        body: Buffer.from([0, 255, 1]).toString('base64'),
        cookies: ['Cookie_1=Value1; Expires=21 Oct 2021 07:48 GMT', 'Cookie_2=Value2; Max-Age=78000'],
        isBase64Encoded: true,
      }),
    );
    expect(answer).toEqual({
      status: 201,
      headers: { 'content-type': 'application/octet-stream', 'my-custom-header': 'Custom Value' },
      cookies: ['Cookie_1=Value1; Expires=21 Oct 2021 07:48 GMT', 'Cookie_2=Value2; Max-Age=78000'],
      body: Buffer.from([0, 255, 1]),
    });
    expect(functionUrlAnswer(ok({ statusCode: 204 }))).toMatchObject({ status: 204, body: '' });
  });

  it.each([
    ['a function error', { status: 'error', errorType: 'Error', message: 'boom' } as const],
    ['a statusCode that is no HTTP status', ok({ statusCode: 'teapot', body: '' })],
    ['a body that is no string', ok({ statusCode: 200, body: { a: 1 } })],
  ])('answers %s 502 Internal Server Error', (_, result) => {
    expect(functionUrlAnswer(result)).toEqual({
      status: 502,
      headers: { 'content-type': 'application/json' },
      cookies: [],
      body: '{"Message":"Internal Server Error"}',
    });
  });
});

describe("the payment provider's handler, through the Function URL translation", () => {
  const ddbMock = mockClient(DynamoDBDocumentClient);
  const provider: PaymentProvider = {
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})),
    tableName: 'provider-test',
    now: () => Date.parse('2026-03-01T12:00:00Z'),
  };
  const CHARGE = {
    account: 'acct-1',
    amountCents: 700,
    currency: 'usd',
    metadata: { runId: 'run-1', mode: 'charge-with-key', eventId: 'e-1' },
  };
  let handleEvent: typeof import('../../../../../services/payment-provider/handler.js').handleEvent;

  beforeAll(async () => {
    // The handler reads its configuration at module scope.
    vi.stubEnv('PROVIDER_TABLE_NAME', 'provider-test');
    ({ handleEvent } = await import('../../../../../services/payment-provider/handler.js'));
    vi.unstubAllEnvs();
  });
  beforeEach(() => {
    ddbMock.reset();
  });

  /** What the local Function URL does: the request to an event, the handler, its result to HTTP. */
  async function through(request: FunctionUrlRequest) {
    const event = functionUrlEvent(request, context) as unknown as APIGatewayProxyEventV2;
    const result: FunctionResult = await handleEvent(provider, event).then(
      (response) => ({ status: 'ok', response }),
      (error: Error) => ({ status: 'error', errorType: error.name, message: error.message }),
    );
    return functionUrlAnswer(result);
  }

  it('charges: method, path, headers and body reach the provider; its answer reaches the client', async () => {
    ddbMock.on(PutCommand).resolves({});
    const answer = await through(post({ body: Buffer.from(JSON.stringify(CHARGE)) }));
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json' });
    expect(JSON.parse(String(answer.body))).toMatchObject({ object: 'charge', amountCents: 700 });
    expect(ddbMock.commandCalls(PutCommand)).toHaveLength(1);
  });

  it('a base64 body (no text content type) is decoded by the handler', async () => {
    ddbMock.on(PutCommand).resolves({});
    const answer = await through(post({ headers: {}, body: Buffer.from(JSON.stringify(CHARGE)) }));
    expect(answer.status).toBe(200);
  });

  it('another path is the provider’s 404; a lost response (the handler throws) is a 502', async () => {
    expect((await through(post({ path: '/refunds' }))).status).toBe(404);

    ddbMock.on(PutCommand).resolves({});
    ddbMock.on(TransactWriteCommand).resolves({});
    const lost = await through(
      post({
        headers: {
          'Content-Type': 'application/json',
          'Idempotency-Key': 'k-1',
          'X-Fault-Lose-Response': '1',
        },
        body: Buffer.from(JSON.stringify(CHARGE)),
      }),
    );
    expect(lost.status).toBe(502);
    expect(ddbMock.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });
});

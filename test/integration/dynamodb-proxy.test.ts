import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RETENTION } from '../../contract/retention.js';
import { createLedgerTable } from '../../harness/environments/provision.js';
import {
  type DynamoDbFault,
  type DynamoDbFaultStats,
  type FaultPolicyOptions,
  faultPolicy,
} from '../../harness/local-aws/dynamodb-proxy/faults.js';
import { meterPolicy } from '../../harness/local-aws/dynamodb-proxy/meter.js';
import {
  type ProxyPolicy,
  type RunningDynamoDbProxy,
  startDynamoDbProxy,
} from '../../harness/local-aws/dynamodb-proxy/proxy.js';
import type { SharedDynamoDb } from '../../harness/local-aws/emulators/dynamodb-emulator.js';
import { creditAccount } from '../../modes/kit/ledger.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

let emulator: SharedDynamoDb;
/** Straight to DynamoDB Local: what was really written, without the proxy in the way. */
let direct: DynamoDBDocumentClient;
let directClient: DynamoDBClient;
let tableName: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  emulator = await sharedDynamoDb('dynamodb-proxy');
  directClient = new DynamoDBClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials });
  direct = DynamoDBDocumentClient.from(directClient);
  tableName = `ledger-${randomUUID()}`;
  await createLedgerTable(directClient, tableName);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  // A document client's destroy() does nothing: the client it wraps holds the sockets.
  directClient?.destroy();
});

/** The proxy with these policies (outermost first) in front of DynamoDB Local, or another target. */
async function start(
  policies: readonly ProxyPolicy[],
  target = emulator.endpoint,
): Promise<RunningDynamoDbProxy> {
  const running = await startDynamoDbProxy({ target, policies });
  cleanups.push(() => running.stop());
  return running;
}

/** The proxy with the fault policy alone, as a faults run starts it. */
async function proxy(
  options: Partial<FaultPolicyOptions> = {},
): Promise<{ readonly endpoint: string; readonly stats: DynamoDbFaultStats }> {
  const faults = faultPolicy({ seed: 'test', rate: 0, ...options });
  const running = await start([faults]);
  return { endpoint: running.endpoint, stats: faults.stats };
}

/** A handler's client, as the handlers build it, pointed at the proxy. */
function clientOf(running: { readonly endpoint: string }, maxAttempts?: number): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    endpoint: running.endpoint,
    region: 'us-east-1',
    credentials,
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
  });
  cleanups.push(() => client.destroy());
  return DynamoDBDocumentClient.from(client);
}

/** Faults only the n-th data-path request (0-based). */
const only =
  (fault: DynamoDbFault, at = 0) =>
  (n: number): DynamoDbFault | undefined =>
    n === at ? fault : undefined;

const partition = (mode: string): string => `RUN#${randomUUID()}#MODE#${mode}`;

async function balanceOf(pk: string, accountId: string): Promise<unknown> {
  const { Item } = await direct.send(
    new GetCommand({ TableName: tableName, Key: { pk, sk: `BAL#${accountId}` } }),
  );
  return Item?.balanceCents;
}

async function itemsIn(pk: string): Promise<Record<string, unknown>[]> {
  const { Items } = await direct.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
    }),
  );
  return Items ?? [];
}

/** The ledger's transaction: an application record (or a marker) and the balance, in one TransactWriteItems. */
function credit(pk: string, sk: string, amountCents: number, options: { marker?: boolean } = {}) {
  return new TransactWriteCommand({
    TransactItems: [
      {
        Put: {
          TableName: tableName,
          Item: { pk, sk, amountCents },
          ...(options.marker ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
        },
      },
      {
        Update: {
          TableName: tableName,
          Key: { pk, sk: 'BAL#a-1' },
          UpdateExpression: 'ADD balanceCents :amount',
          ExpressionAttributeValues: { ':amount': amountCents },
        },
      },
    ],
  });
}

/** Every attempt's ClientRequestToken, read from the serialized request after the retry middleware. */
function recordTokens(client: DynamoDBDocumentClient): string[] {
  const tokens: string[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      const { body } = args.request as { body?: unknown };
      // The JSON serializer writes bytes, not a string.
      const text = body instanceof Uint8Array ? new TextDecoder().decode(body) : String(body);
      const parsed: { ClientRequestToken?: string } = JSON.parse(text);
      if (parsed.ClientRequestToken !== undefined) tokens.push(parsed.ClientRequestToken);
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'recordTokens' },
  );
  return tokens;
}

async function failure(
  promise: Promise<unknown>,
): Promise<Error & { $metadata?: { httpStatusCode?: number; attempts?: number } }> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof Error))
    throw new Error(`expected the request to fail, it returned ${String(outcome)}`);
  return outcome;
}

describe('DynamoDB proxy, fault policy: pass-through', () => {
  it('forwards Put, Get, Query, Update and TransactWriteItems unchanged when the rate is 0', async () => {
    const running = await proxy();
    const client = clientOf(running);
    const pk = partition('at-least-once');

    await client.send(new PutCommand({ TableName: tableName, Item: { pk, sk: 'A', note: 'é ü 😀' } }));
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk, sk: 'STAT#deliveries' },
        UpdateExpression: 'ADD #count :n',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':n': 3 },
      }),
    );
    const transaction = await client.send(credit(pk, 'APP#e-1', 125));
    const got = await client.send(new GetCommand({ TableName: tableName, Key: { pk, sk: 'A' } }));
    const queried = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      }),
    );
    const described = await client.send(new DescribeTableCommand({ TableName: tableName }));

    expect(transaction.$metadata.attempts).toBe(1);
    expect(got.Item).toEqual({ pk, sk: 'A', note: 'é ü 😀' });
    expect(queried.Items?.map((item) => item.sk)).toEqual(['A', 'APP#e-1', 'BAL#a-1', 'STAT#deliveries']);
    expect(described.Table?.TableName).toBe(tableName);
    expect(await balanceOf(pk, 'a-1')).toBe(125);
    expect(running.stats).toEqual({
      requests: 6,
      throttled: 0,
      serverErrors: 0,
      lostResponses: 0,
      conflicts: 0,
      outageRejections: 0,
      byMode: {
        'at-least-once': {
          throttled: 0,
          serverErrors: 0,
          lostResponses: 0,
          conflicts: 0,
          outageRejections: 0,
        },
        other: { throttled: 0, serverErrors: 0, lostResponses: 0, conflicts: 0, outageRejections: 0 },
      },
    });
  });

  it('passes DynamoDB Local errors through as they are', async () => {
    const client = clientOf(await proxy(), 1);
    const pk = partition('effectively-once');
    await client.send(credit(pk, 'APP#e-1', 125, { marker: true }));

    const replay = await failure(client.send(credit(pk, 'APP#e-1', 125, { marker: true })));

    expect(replay.name).toBe('TransactionCanceledException');
    expect(await balanceOf(pk, 'a-1')).toBe(125);
  });

  it('never faults control-plane calls, even at rate 1', async () => {
    const running = await proxy({ rate: 1, faultFor: () => 'throttle' });
    const client = clientOf(running, 1);

    const described = await client.send(new DescribeTableCommand({ TableName: tableName }));

    expect(described.Table?.TableName).toBe(tableName);
    expect(running.stats).toMatchObject({ requests: 1, throttled: 0, serverErrors: 0, lostResponses: 0 });
  });
});

describe('DynamoDB proxy, fault policy: throttling and 5xx', () => {
  it('a throttled request is retried by the SDK and then succeeds', async () => {
    const running = await proxy({ faultFor: only('throttle') });
    const client = clientOf(running);
    const pk = partition('at-most-once');

    const put = await client.send(new PutCommand({ TableName: tableName, Item: { pk, sk: 'A' } }));

    expect(put.$metadata.attempts).toBe(2);
    expect(await itemsIn(pk)).toEqual([{ pk, sk: 'A' }]);
    expect(running.stats).toMatchObject({ requests: 2, throttled: 1, serverErrors: 0, lostResponses: 0 });
    expect(running.stats.byMode['at-most-once']).toEqual({
      throttled: 1,
      serverErrors: 0,
      lostResponses: 0,
      conflicts: 0,
      outageRejections: 0,
    });
  });

  it('a 5xx is retried by the SDK and then succeeds, and nothing was written by the failed attempt', async () => {
    const running = await proxy({ faultFor: only('server-error') });
    const client = clientOf(running);
    const pk = partition('at-least-once');

    const transaction = await client.send(credit(pk, 'APP#e-1', 125));

    expect(transaction.$metadata.attempts).toBe(2);
    expect(await balanceOf(pk, 'a-1')).toBe(125);
    expect(running.stats).toMatchObject({ requests: 2, throttled: 0, serverErrors: 1, lostResponses: 0 });
  });

  it('with maxAttempts 1, a throttle surfaces as ThrottlingException or ProvisionedThroughputExceededException', async () => {
    const running = await proxy({ faultFor: () => 'throttle' });
    const client = clientOf(running, 1);
    const pk = partition('at-most-once');

    const errors = [];
    // One at a time: the order of requests, and so each one's draw of the variant, is fixed.
    for (let i = 0; i < 12; i += 1) {
      errors.push(await failure(client.send(new GetCommand({ TableName: tableName, Key: { pk, sk: 'A' } }))));
    }

    expect(new Set(errors.map((error) => error.name))).toEqual(
      new Set(['ThrottlingException', 'ProvisionedThroughputExceededException']),
    );
    expect(new Set(errors.map((error) => error.$metadata?.httpStatusCode))).toEqual(new Set([400]));
    expect(running.stats).toMatchObject({ requests: 12, throttled: 12 });
  });

  it('during an outage the SDK retries the 503 itself, every attempt is refused, and nothing is written', async () => {
    const faults = faultPolicy({ seed: 'test', rate: 0, outage: { afterSeconds: 0, forSeconds: 600 } });
    const client = clientOf(await start([faults]));
    const pk = partition('effectively-once');
    faults.startClock();

    const error = await failure(client.send(credit(pk, 'APP#e-1', 125, { marker: true })));
    const described = await client.send(new DescribeTableCommand({ TableName: tableName }));

    expect(`${error.name} ${error.$metadata?.httpStatusCode}`).toBe('ServiceUnavailable 503');
    // The DynamoDB client's default: 4 attempts, all of them refused.
    expect(error.$metadata?.attempts).toBe(4);
    expect(described.Table?.TableName).toBe(tableName);
    expect(await itemsIn(pk)).toEqual([]);
    expect(faults.stats).toMatchObject({ requests: 5, outageRejections: 4 });
    expect(faults.stats.byMode['effectively-once']).toMatchObject({ outageRejections: 4 });
  });

  it('with maxAttempts 1, a 5xx surfaces as InternalServerError (500) or ServiceUnavailable (503)', async () => {
    const running = await proxy({ faultFor: () => 'server-error' });
    const client = clientOf(running, 1);
    const pk = partition('at-most-once');

    const errors = [];
    for (let i = 0; i < 12; i += 1) {
      errors.push(await failure(client.send(new GetCommand({ TableName: tableName, Key: { pk, sk: 'A' } }))));
    }

    expect(new Set(errors.map((error) => `${error.name} ${error.$metadata?.httpStatusCode}`))).toEqual(
      new Set(['InternalServerError 500', 'ServiceUnavailable 503']),
    );
    expect(running.stats).toMatchObject({ requests: 12, serverErrors: 12 });
  });
});

describe('DynamoDB proxy, fault policy: lost responses', () => {
  it('TransactWriteItems: the SDK retries with the same ClientRequestToken and DynamoDB Local applies it once', async () => {
    const running = await proxy({ faultFor: only('lost-response') });
    const client = clientOf(running);
    const tokens = recordTokens(client);
    const pk = partition('at-least-once');

    const transaction = await client.send(credit(pk, 'APP#e-1#1#m-1#r-1#0', 125));

    expect(transaction.$metadata.attempts).toBe(2);
    expect(tokens).toHaveLength(2);
    expect(tokens[1]).toBe(tokens[0]);
    // DynamoDB Local honours the token (see emulators.test.ts): the retry is a no-op success.
    expect(await balanceOf(pk, 'a-1')).toBe(125);
    expect((await itemsIn(pk)).map((item) => item.sk)).toEqual(['APP#e-1#1#m-1#r-1#0', 'BAL#a-1']);
    expect(running.stats).toMatchObject({ requests: 2, lostResponses: 1 });
    expect(running.stats.byMode['at-least-once']).toEqual({
      throttled: 0,
      serverErrors: 0,
      lostResponses: 1,
      conflicts: 0,
      outageRejections: 0,
    });
  });

  it('effectively-once: the retried marker transaction succeeds instead of failing its own condition', async () => {
    const running = await proxy({ faultFor: only('lost-response') });
    const client = clientOf(running);
    const pk = partition('effectively-once');

    const transaction = await client.send(credit(pk, 'APP#e-1', 125, { marker: true }));

    // Without the token the retry would be cancelled with ConditionalCheckFailed on the marker its
    // own first attempt wrote, and the ledger would call this first application a duplicate.
    expect(transaction.$metadata.attempts).toBe(2);
    expect(await balanceOf(pk, 'a-1')).toBe(125);
  });

  it('UpdateItem ADD has no token: a lost response makes the SDK apply it twice', async () => {
    const running = await proxy({ faultFor: only('lost-response') });
    const client = clientOf(running);
    const pk = partition('at-most-once');

    const update = await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk, sk: 'STAT#deliveries' },
        UpdateExpression: 'ADD #count :n',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':n': 1 },
      }),
    );

    expect(update.$metadata.attempts).toBe(2);
    const [counter] = await itemsIn(pk);
    expect(counter?.count).toBe(2);
  });

  it('with maxAttempts 1 the caller sees InternalServerError although the write was applied', async () => {
    const running = await proxy({ faultFor: only('lost-response') });
    const client = clientOf(running, 1);
    const pk = partition('at-least-once');

    const error = await failure(client.send(credit(pk, 'APP#e-1', 125)));

    expect(error.name).toBe('InternalServerError');
    expect(error.$metadata?.httpStatusCode).toBe(500);
    expect(await balanceOf(pk, 'a-1')).toBe(125);
  });
});

describe('DynamoDB proxy, fault policy: transaction conflicts (hot keys DynamoDB Local never produces)', () => {
  it('cancels a transaction with TransactionConflict on its last item, writes nothing, and the ledger retries it', async () => {
    const running = await proxy({ faultFor: only('conflict') });
    const pk = partition('at-least-once');
    const ledger = {
      ddb: clientOf(running),
      tableName,
      mode: 'at-least-once' as const,
      retention: DEFAULT_RETENTION,
    };
    const runId = /^RUN#(.+)#MODE#/.exec(pk)?.[1] ?? '';
    const message = {
      eventId: 'evt-1',
      runId,
      accountId: 'acct-1',
      amountCents: 125,
      seq: 1,
      createdAt: new Date().toISOString(),
    };

    const outcome = await creditAccount(
      ledger,
      message,
      { messageId: 'm', receiveCount: 1, requestId: 'r', position: 0 },
      { idempotent: false },
    );

    expect(outcome).toBe('applied');
    expect(running.stats).toMatchObject({ conflicts: 1, throttled: 0 });
    expect(await balanceOf(pk, 'acct-1')).toBe(125);
    const { Item } = await direct.send(
      new GetCommand({ TableName: tableName, Key: { pk, sk: 'STAT#retriedCancellations' } }),
    );
    expect(Item?.count).toBe(1);
  });

  it('surfaces as a TransactionCanceledException with one reason per item', async () => {
    const running = await proxy({ faultFor: () => 'conflict' });
    const pk = partition('effectively-once');
    const error = await clientOf(running)
      .send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: tableName, Item: { pk, sk: 'APP#x' } } },
            { Put: { TableName: tableName, Item: { pk, sk: 'BAL#x' } } },
          ],
        }),
      )
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      name: 'TransactionCanceledException',
      CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
    });
  });

  it('never answers a conflict to the retry of a transaction that already landed (DynamoDB answers it with success)', async () => {
    // A conflict there would make the ledger retry with a fresh token and credit the balance twice.
    const running = await proxy({
      faultFor: (n) => (n === 0 ? 'lost-response' : n === 1 ? 'conflict' : undefined),
    });
    const pk = partition('at-least-once');
    const runId = /^RUN#(.+)#MODE#/.exec(pk)?.[1] ?? '';
    const ledger = {
      ddb: clientOf(running),
      tableName,
      mode: 'at-least-once' as const,
      retention: DEFAULT_RETENTION,
    };

    await creditAccount(
      ledger,
      {
        eventId: 'evt-1',
        runId,
        accountId: 'acct-1',
        amountCents: 125,
        seq: 1,
        createdAt: new Date().toISOString(),
      },
      { messageId: 'm', receiveCount: 1, requestId: 'r', position: 0 },
      { idempotent: false },
    );

    expect(running.stats).toMatchObject({ lostResponses: 1, conflicts: 0 });
    expect(await balanceOf(pk, 'acct-1')).toBe(125);
  });

  it('throttles an operation that is not a transaction instead', async () => {
    const running = await proxy({ faultFor: only('conflict') });
    await clientOf(running).send(
      new PutCommand({ TableName: tableName, Item: { pk: partition('at-most-once'), sk: 'x' } }),
    );
    expect(running.stats).toMatchObject({ conflicts: 0, throttled: 1 });
  });
});

describe('DynamoDB proxy, fault policy: draws and counts', () => {
  it('counts faults per mode from the partition key in the body, and under other when there is none', async () => {
    const kinds: DynamoDbFault[] = ['throttle', 'server-error', 'lost-response', 'throttle'];
    const running = await proxy({ faultFor: (n) => kinds[n] });
    const client = clientOf(running, 1);
    const get = (pk: string) => client.send(new GetCommand({ TableName: tableName, Key: { pk, sk: 'A' } }));

    await failure(get(partition('at-most-once')));
    await failure(get(partition('effectively-once')));
    await failure(get(partition('effectively-once')));
    await failure(get('RUN#r-1#MANIFEST'));
    await get(partition('at-least-once'));

    expect(running.stats).toEqual({
      requests: 5,
      throttled: 2,
      serverErrors: 1,
      lostResponses: 1,
      conflicts: 0,
      outageRejections: 0,
      byMode: {
        'at-most-once': {
          throttled: 1,
          serverErrors: 0,
          lostResponses: 0,
          conflicts: 0,
          outageRejections: 0,
        },
        'effectively-once': {
          throttled: 0,
          serverErrors: 1,
          lostResponses: 1,
          conflicts: 0,
          outageRejections: 0,
        },
        'at-least-once': {
          throttled: 0,
          serverErrors: 0,
          lostResponses: 0,
          conflicts: 0,
          outageRejections: 0,
        },
        other: { throttled: 1, serverErrors: 0, lostResponses: 0, conflicts: 0, outageRejections: 0 },
      },
    });
  });

  it('draws from the seed: the same sequence of requests gets the same faults, at about the rate', async () => {
    const outcomes = async (seed: string): Promise<string[]> => {
      const client = clientOf(await proxy({ seed, rate: 0.5 }), 1);
      const results: string[] = [];
      for (let i = 0; i < 40; i += 1) {
        const outcome = await client
          .send(new GetCommand({ TableName: tableName, Key: { pk: 'RUN#r#MODE#at-most-once', sk: 'A' } }))
          .then(
            () => 'ok',
            (error: unknown) => (error instanceof Error ? error.name : String(error)),
          );
        results.push(outcome);
      }
      return results;
    };

    const first = await outcomes('seed-1');
    const again = await outcomes('seed-1');
    const other = await outcomes('seed-2');

    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    const faulted = first.filter((outcome) => outcome !== 'ok').length;
    expect(faulted).toBeGreaterThan(8);
    expect(faulted).toBeLessThan(32);
  });

  it('counts a Powertools idempotency record under its mode (keyed <mode>#<hash>)', async () => {
    const running = await proxy({ faultFor: only('throttle') });
    await clientOf(running).send(
      new PutCommand({ TableName: tableName, Item: { pk: 'x', sk: 'y', id: 'powertools-idempotency#abc' } }),
    );
    expect(running.stats.byMode['powertools-idempotency']).toMatchObject({ throttled: 1 });
  });

  it('draws per event, not per arrival: two modes sending the same events in opposite orders get the same faults', async () => {
    const client = clientOf(await proxy({ seed: 'per-event', rate: 0.4 }), 1);
    const events = Array.from({ length: 30 }, (_, index) => `evt-${index}`);
    const faultedEvents = async (mode: string, order: string[]): Promise<string[]> => {
      const pk = partition(mode);
      const faulted: string[] = [];
      for (const eventId of order) {
        const sent = client.send(
          new PutCommand({ TableName: tableName, Item: { pk, sk: `APP#${eventId}` } }),
        );
        if (
          await sent.then(
            () => false,
            () => true,
          )
        )
          faulted.push(eventId);
      }
      return faulted.sort();
    };

    const forward = await faultedEvents('at-least-once', events);
    const backward = await faultedEvents('effectively-once', [...events].reverse());

    expect(forward.length).toBeGreaterThan(3);
    expect(backward).toEqual(forward);
  });
});

describe('DynamoDB proxy, metering policy', () => {
  it('counts each mode’s requests per operation, with the capacity DynamoDB Local reports and the rules’ write units', async () => {
    const meter = meterPolicy();
    const client = clientOf(await start([meter]));
    const pk = partition('effectively-once');

    await client.send(new PutCommand({ TableName: tableName, Item: { pk, sk: 'A' } }));
    await client.send(credit(pk, 'APP#e-1', 125));
    await client.send(new GetCommand({ TableName: tableName, Key: { pk, sk: 'A' } }));
    await client.send(new DescribeTableCommand({ TableName: tableName }));

    const counts = meter.stats.byMode['effectively-once'];
    expect(Object.keys(meter.stats.byMode)).toEqual(['effectively-once']);
    expect(counts?.PutItem).toMatchObject({ requests: 1, failed: 0, consumedUnits: 1, ruleWriteUnits: 1 });
    // Two small items: 2 × 2 by the rules; DynamoDB Local reports less (see meter.ts).
    expect(counts?.TransactWriteItems).toMatchObject({ requests: 1, failed: 0, ruleWriteUnits: 4 });
    expect(counts?.TransactWriteItems?.consumedUnits).toBeGreaterThan(0);
    expect(counts?.GetItem).toMatchObject({ requests: 1, ruleWriteUnits: 0 });
    expect(counts?.GetItem?.consumedUnits).toBeGreaterThan(0);
    expect(await balanceOf(pk, 'a-1')).toBe(125);
  });

  it('counts a cancelled transaction as failed, its rule units apart', async () => {
    const meter = meterPolicy();
    const client = clientOf(await start([meter]), 1);
    const pk = partition('effectively-once');
    await client.send(credit(pk, 'APP#e-1', 125, { marker: true }));

    await failure(client.send(credit(pk, 'APP#e-1', 125, { marker: true })));

    expect(meter.stats.byMode['effectively-once']?.TransactWriteItems).toMatchObject({
      requests: 2,
      failed: 1,
      ruleWriteUnits: 8,
      failedRuleWriteUnits: 4,
    });
  });
});

describe('DynamoDB proxy: faults and the meter in one listener', () => {
  it('the meter counts an injected throttle as the handler saw it (a failed request) and the SDK’s retry beside it', async () => {
    const meter = meterPolicy();
    const faults = faultPolicy({ seed: 'test', rate: 0, faultFor: only('throttle') });
    const client = clientOf(await start([meter, faults]));
    const pk = partition('at-most-once');

    const put = await client.send(new PutCommand({ TableName: tableName, Item: { pk, sk: 'A' } }));

    expect(put.$metadata.attempts).toBe(2);
    expect(faults.stats).toMatchObject({ requests: 2, throttled: 1 });
    expect(faults.stats.byMode['at-most-once']).toEqual({
      throttled: 1,
      serverErrors: 0,
      lostResponses: 0,
      conflicts: 0,
      outageRejections: 0,
    });
    expect(meter.stats.byMode['at-most-once']?.PutItem).toMatchObject({
      requests: 2,
      failed: 1,
      consumedUnits: 1,
      ruleWriteUnits: 2,
      failedRuleWriteUnits: 1,
    });
    expect(await itemsIn(pk)).toEqual([{ pk, sk: 'A' }]);
  });

  it('a lost transaction is applied once, counted as lost by the faults and as failed then repeated by the meter', async () => {
    const meter = meterPolicy();
    const faults = faultPolicy({ seed: 'test', rate: 0, faultFor: only('lost-response') });
    const client = clientOf(await start([meter, faults]));
    const pk = partition('at-least-once');

    const transaction = await client.send(credit(pk, 'APP#e-1', 125));

    expect(transaction.$metadata.attempts).toBe(2);
    expect(await balanceOf(pk, 'a-1')).toBe(125);
    expect(faults.stats).toMatchObject({ requests: 2, lostResponses: 1 });
    expect(meter.stats.byMode['at-least-once']?.TransactWriteItems).toMatchObject({
      requests: 2,
      failed: 1,
      ruleWriteUnits: 8,
      failedRuleWriteUnits: 4,
    });
  });

  it('draws the same faults with the meter in front as without it (the meter’s ReturnConsumedCapacity changes no draw)', async () => {
    const outcomes = async (policies: (faults: ProxyPolicy) => ProxyPolicy[]): Promise<string[]> => {
      const faults = faultPolicy({ seed: 'same-draws', rate: 0.5 });
      const client = clientOf(await start(policies(faults)), 1);
      const pk = `RUN#${randomUUID()}#MODE#at-least-once`;
      const results: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        results.push(
          await client.send(credit(pk, `APP#evt-${i}`, 1)).then(
            () => 'ok',
            (error: unknown) => (error instanceof Error ? error.name : String(error)),
          ),
        );
      }
      return results;
    };

    const alone = await outcomes((faults) => [faults]);
    const metered = await outcomes((faults) => [meterPolicy(), faults]);

    expect(alone.filter((outcome) => outcome !== 'ok').length).toBeGreaterThan(3);
    expect(metered).toEqual(alone);
  });
});

/**
 * A DynamoDB stand-in on a real socket that answers `{}` to every request, each one only once the
 * test lets it go (`hold()`): so a test can close the proxy's client while DynamoDB is still busy.
 */
async function startSlowUpstream(): Promise<{
  readonly endpoint: string;
  /** Bodies received, in order. */
  readonly received: string[];
  /** The next request is held; resolves when it has arrived, with a function that answers it. */
  hold(): Promise<() => void>;
}> {
  let held: ((release: () => void) => void) | undefined;
  const received: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end('{}');
      };
      const holder = held;
      held = undefined;
      if (holder) holder(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    hold: () =>
      new Promise((resolve) => {
        held = resolve;
      }),
  };
}

/** Errors nothing caught while `run` ran: what would have taken the harness (and a run) down. */
async function uncaughtDuring(run: () => Promise<void>): Promise<unknown[]> {
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
  try {
    await run();
    // Anything the proxy would still throw once the test's requests are done.
    await delay(50);
  } finally {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
  }
  return uncaught;
}

const GET_ITEM = JSON.stringify({
  TableName: 't',
  Key: { pk: { S: 'RUN#r#MODE#at-least-once' }, sk: { S: 'A' } },
});

/** A raw client on its own connection: the request's head, and `sent` bytes of its body. */
function rawRequest(endpoint: string, body: string, sent = body.length) {
  const socket = connect(Number(new URL(endpoint).port), '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(
    'POST / HTTP/1.1\r\nhost: dynamodb\r\ncontent-type: application/x-amz-json-1.0\r\n' +
      `x-amz-target: DynamoDB_20120810.GetItem\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n` +
      body.slice(0, sent),
  );
  return socket;
}

/** Closes a raw client, and gives the proxy time to see its connection close. */
async function hangUp(socket: ReturnType<typeof connect>): Promise<void> {
  socket.destroy();
  await delay(100);
}

interface Answered {
  readonly status: number;
  readonly body: string;
}

/** An ordinary request on a fresh connection: its status and body. */
function getItem(endpoint: string): Promise<Answered> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      endpoint,
      {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'DynamoDB_20120810.GetItem',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(GET_ITEM);
  });
}

/**
 * A client sends a whole request and hangs up while DynamoDB is still on it; DynamoDB then answers
 * (the proxy holds an answer for a client that is gone), and another client asks.
 */
async function hangUpBeforeTheAnswer(
  upstream: Awaited<ReturnType<typeof startSlowUpstream>>,
  endpoint: string,
): Promise<{ uncaught: unknown[]; next: Answered | undefined }> {
  let next: Answered | undefined;
  const uncaught = await uncaughtDuring(async () => {
    const holding = upstream.hold();
    const client = rawRequest(endpoint, GET_ITEM);
    const answer = await holding;
    await hangUp(client);
    answer();
    await delay(50);
    next = await getItem(endpoint);
  });
  return { uncaught, next };
}

describe('DynamoDB proxy: a client that goes away (a killed execution environment)', () => {
  it('a client gone before its answer is relayed gets none, the request still reaches DynamoDB, and the next one is served', async () => {
    const upstream = await startSlowUpstream();
    const running = await start([], upstream.endpoint);

    const { uncaught, next } = await hangUpBeforeTheAnswer(upstream, running.endpoint);

    expect(uncaught).toEqual([]);
    expect(next).toEqual({ status: 200, body: '{}' });
    expect(upstream.received).toEqual([GET_ITEM, GET_ITEM]);
  });

  it('a client gone mid-request: nothing is forwarded, and the next request is served', async () => {
    const upstream = await startSlowUpstream();
    const running = await start([meterPolicy(), faultPolicy({ seed: 'test', rate: 0 })], upstream.endpoint);
    let next: Answered | undefined;

    const uncaught = await uncaughtDuring(async () => {
      await hangUp(rawRequest(running.endpoint, GET_ITEM, 10));
      next = await getItem(running.endpoint);
    });

    expect(uncaught).toEqual([]);
    expect(next?.status).toBe(200);
    expect(upstream.received).toHaveLength(1);
  });

  it('with faults and the meter: a client gone before its lost response is answered, and the meter still counts it', async () => {
    const upstream = await startSlowUpstream();
    const meter = meterPolicy();
    const faults = faultPolicy({ seed: 'test', rate: 0, faultFor: only('lost-response') });
    const running = await start([meter, faults], upstream.endpoint);

    const { uncaught, next } = await hangUpBeforeTheAnswer(upstream, running.endpoint);

    expect(uncaught).toEqual([]);
    expect(next?.status).toBe(200);
    expect(faults.stats).toMatchObject({ requests: 2, lostResponses: 1 });
    expect(meter.stats.byMode['at-least-once']?.GetItem).toMatchObject({ requests: 2, failed: 1 });
  });

  it('a policy that throws answers 502 in DynamoDB’s error shape, and the next request is served', async () => {
    const upstream = await startSlowUpstream();
    let calls = 0;
    const faulty: ProxyPolicy = {
      admit: () => {
        calls += 1;
        if (calls === 1) throw new Error('a bug in a policy');
        return undefined;
      },
    };
    const running = await start([faulty], upstream.endpoint);
    const answers: Answered[] = [];

    const uncaught = await uncaughtDuring(async () => {
      answers.push(await getItem(running.endpoint));
      answers.push(await getItem(running.endpoint));
    });

    expect(uncaught).toEqual([]);
    expect(answers[0]?.status).toBe(502);
    expect(JSON.parse(answers[0]?.body ?? '{}')).toMatchObject({
      __type: 'com.amazonaws.dynamodb.v20120810#DynamoDbProxyError',
      message: expect.stringContaining('a bug in a policy'),
    });
    expect(answers[1]).toEqual({ status: 200, body: '{}' });
  });
});

describe('DynamoDB proxy: lifecycle', () => {
  it('stop() closes the listener and open keep-alive connections, and can be called again', async () => {
    const running = await startDynamoDbProxy({
      target: emulator.endpoint,
      policies: [meterPolicy(), faultPolicy({ seed: 'test', rate: 0 })],
    });
    const client = clientOf(running);
    // Leaves a keep-alive connection open, which server.close() alone would wait for.
    await client.send(new DescribeTableCommand({ TableName: tableName }));

    await running.stop();
    await running.stop();

    const { port } = new URL(running.endpoint);
    await expect(connectTo(Number(port))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('answers 502 naming the target when DynamoDB is unreachable', async () => {
    const unreachable = await start([faultPolicy({ seed: 'test', rate: 0 })], 'http://127.0.0.1:1');
    const client = clientOf(unreachable, 1);

    const error = await failure(client.send(new DescribeTableCommand({ TableName: tableName })));

    expect(error.$metadata?.httpStatusCode).toBe(502);
    expect(error.message).toContain('http://127.0.0.1:1');
  });
});

function connectTo(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

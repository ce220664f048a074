import { describe, expect, it } from 'vitest';
import {
  type MeterPolicy,
  meterPolicy,
  ruleUnits,
} from '../../../../../harness/local-aws/dynamodb-proxy/meter.js';
import type { ProxyAnswer, RequestHead } from '../../../../../harness/local-aws/dynamodb-proxy/proxy.js';

/** The wire format of a ledger key, as the handlers' requests carry it. */
const key = { pk: { S: 'RUN#r#MODE#effectively-once' }, sk: { S: 'BAL#acct-1' } };
const keyBytes = 2 + 27 + 2 + 10;

describe('the meter policy’s write units, by the rules, from the request’s items', () => {
  it('counts a transaction of a marker and a balance update, both small, as 4 units', () => {
    const marker = { ...key, sk: { S: 'APP#evt-000001' }, amountCents: { N: '125' } };
    const markerBytes = 2 + 27 + 2 + 14 + 11 + 3;
    const request = {
      TransactItems: [
        { Put: { TableName: 'ledger', Item: marker, ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Update: {
            TableName: 'ledger',
            Key: key,
            UpdateExpression: 'ADD balanceCents :amount',
            ExpressionAttributeValues: { ':amount': { N: '125' } },
          },
        },
      ],
    };

    expect(ruleUnits('TransactWriteItems', request)).toEqual({
      units: 4,
      maxItemBytes: Math.max(markerBytes, keyBytes + 12 + 3),
    });
  });

  it('counts each transaction item by its own size: a 1.5 KB item and a small one are 6', () => {
    const big = { ...key, pad: { S: 'x'.repeat(1536 - keyBytes - 3) } };
    expect(itemSize(big)).toBe(1536);
    const request = {
      TransactItems: [{ Put: { Item: big } }, { Delete: { Key: key } }],
    };
    expect(ruleUnits('TransactWriteItems', request)).toEqual({ units: 6, maxItemBytes: 1536 });
  });

  it('counts a PutItem by its item, rounded up to the next KB', () => {
    const small = { Item: key };
    expect(ruleUnits('PutItem', small)).toEqual({ units: 1, maxItemBytes: keyBytes });
    const justOver = { Item: { ...key, pad: { S: 'x'.repeat(1025 - keyBytes - 3) } } };
    expect(ruleUnits('PutItem', justOver)).toEqual({ units: 2, maxItemBytes: 1025 });
  });

  it('counts an UpdateItem as its key plus every attribute its SET and ADD clauses write, names resolved', () => {
    const request = {
      Key: key,
      UpdateExpression: 'SET #note = :note, expiresAt = :ttl ADD #count :one',
      ExpressionAttributeNames: { '#note': 'note', '#count': 'count' },
      ExpressionAttributeValues: { ':note': { S: 'hello' }, ':ttl': { N: '1790000000' }, ':one': { N: '1' } },
    };
    const written = keyBytes + (4 + 5) + (9 + 3) + (5 + 2);
    expect(ruleUnits('UpdateItem', request)).toEqual({ units: 1, maxItemBytes: written });
  });

  it('counts a DeleteItem by its key', () => {
    expect(ruleUnits('DeleteItem', { Key: key })).toEqual({ units: 1, maxItemBytes: keyBytes });
  });
});

/** A request's head as the proxy hands it to its policies. */
function headOf(operation: string): RequestHead {
  return { method: 'POST', url: '/', headers: {}, operation };
}

function jsonAnswer(status: number, body: unknown): ProxyAnswer {
  return { status, headers: {}, body: Buffer.from(JSON.stringify(body)) };
}

/** Runs one request through the policy; `upstream` answers what was forwarded (and records it). */
async function exchange(
  meter: MeterPolicy,
  operation: string,
  request: unknown,
  upstream: (forwarded: Record<string, unknown>) => ProxyAnswer,
): Promise<{ forwarded: Record<string, unknown>[]; answer: ProxyAnswer }> {
  const forwarded: Record<string, unknown>[] = [];
  const forward = async (body: Buffer) => {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    forwarded.push(parsed);
    return upstream(parsed);
  };
  const body = Buffer.from(JSON.stringify(request));
  const handle = meter.admit(headOf(operation));
  const answer = handle ? await handle(body, forward) : await forward(body);
  return { forwarded, answer };
}

const put = { TableName: 'ledger', Item: { ...key, sk: { S: 'APP#evt-1' } } };

describe('the meter policy’s counts, per mode and operation', () => {
  it('asks DynamoDB for the consumed capacity of a data-path request that does not, and counts it', async () => {
    const meter = meterPolicy();
    const { forwarded, answer } = await exchange(meter, 'PutItem', put, () =>
      jsonAnswer(200, { ConsumedCapacity: { TableName: 'ledger', CapacityUnits: 1 } }),
    );

    expect(forwarded).toEqual([{ ...put, ReturnConsumedCapacity: 'TOTAL' }]);
    expect(answer.status).toBe(200);
    expect(meter.stats.byMode).toEqual({
      'effectively-once': {
        PutItem: {
          requests: 1,
          failed: 0,
          consumedUnits: 1,
          ruleWriteUnits: 1,
          failedRuleWriteUnits: 0,
          maxItemBytes: 2 + 27 + 2 + 9,
        },
      },
    });
  });

  it('leaves a request that sets ReturnConsumedCapacity itself as it is', async () => {
    const { forwarded } = await exchange(
      meterPolicy(),
      'GetItem',
      { Key: key, ReturnConsumedCapacity: 'NONE' },
      () => jsonAnswer(200, {}),
    );
    expect(forwarded).toEqual([{ Key: key, ReturnConsumedCapacity: 'NONE' }]);
  });

  it('counts an error answer as failed, with its rule units apart and no consumed units', async () => {
    const meter = meterPolicy();
    await exchange(meter, 'PutItem', put, () =>
      jsonAnswer(400, { __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException' }),
    );
    expect(meter.stats.byMode['effectively-once']?.PutItem).toMatchObject({
      requests: 1,
      failed: 1,
      consumedUnits: 0,
      ruleWriteUnits: 1,
      failedRuleWriteUnits: 1,
    });
  });

  it('counts a request under other when its body names no mode, and a Powertools record under its mode', async () => {
    const meter = meterPolicy();
    const ok = () => jsonAnswer(200, {});
    await exchange(meter, 'GetItem', { Key: { pk: { S: 'RUN#r-1#MANIFEST' }, sk: { S: 'M' } } }, ok);
    await exchange(meter, 'GetItem', { Key: { id: { S: 'powertools-idempotency#abc' } } }, ok);
    expect(Object.keys(meter.stats.byMode).sort()).toEqual(['other', 'powertools-idempotency']);
  });

  it('passes control-plane calls and bodies that are not JSON through untouched and uncounted', async () => {
    const meter = meterPolicy();
    expect(meter.admit(headOf('DescribeTable'))).toBeUndefined();
    const handle = meter.admit(headOf('GetItem'));
    const forwarded: string[] = [];
    await handle?.(Buffer.from('not json'), async (body) => {
      forwarded.push(body.toString('utf8'));
      return jsonAnswer(400, {});
    });
    expect(forwarded).toEqual(['not json']);
    expect(meter.stats.byMode).toEqual({});
  });

  it('forgets every count on reset()', async () => {
    const meter = meterPolicy();
    await exchange(meter, 'PutItem', put, () => jsonAnswer(200, {}));
    meter.reset();
    expect(meter.stats.byMode).toEqual({});
  });
});

function itemSize(item: Record<string, { S: string }>): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value.S),
    0,
  );
}

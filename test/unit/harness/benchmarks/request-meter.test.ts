import { describe, expect, it } from 'vitest';
import { ruleUnits } from '../../../../harness/benchmarks/request-meter.js';

/** The wire format of a ledger key, as the handlers' requests carry it. */
const key = { pk: { S: 'RUN#r#MODE#effectively-once' }, sk: { S: 'BAL#acct-1' } };
const keyBytes = 2 + 27 + 2 + 10;

describe('the request meter’s write units, by the rules, from the request’s items', () => {
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

function itemSize(item: Record<string, { S: string }>): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value.S),
    0,
  );
}

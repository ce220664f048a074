import { describe, expect, it } from 'vitest';
import {
  modeOf,
  parseJsonObject,
  targetOperation,
} from '../../../../../harness/local-aws/dynamodb-proxy/request.js';

const body = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('the DynamoDB proxy’s reading of a request', () => {
  it('takes the operation from X-Amz-Target, and none without one', () => {
    expect(targetOperation({ 'x-amz-target': 'DynamoDB_20120810.TransactWriteItems' })).toBe(
      'TransactWriteItems',
    );
    expect(targetOperation({})).toBe('');
  });

  it('takes the mode from the ledger’s partition key', () => {
    expect(modeOf(body({ Key: { pk: { S: 'RUN#r-1#MODE#at-least-once' }, sk: { S: 'BAL#a' } } }))).toBe(
      'at-least-once',
    );
  });

  it('takes the mode from a Powertools idempotency record’s key (<mode>#<hash>)', () => {
    expect(
      modeOf(body({ Item: { id: { S: 'powertools-idempotency#abc' }, status: { S: 'INPROGRESS' } } })),
    ).toBe('powertools-idempotency');
  });

  it('counts a body that names no mode, or a name that is not a mode, under other', () => {
    expect(modeOf(body({ Key: { pk: { S: 'RUN#r-1#MANIFEST' } } }))).toBe('other');
    expect(modeOf(body({ Key: { pk: { S: 'RUN#r-1#MODE#exactly-twice' } } }))).toBe('other');
    expect(modeOf(Buffer.from('not json'))).toBe('other');
  });

  it('parses a JSON object, and nothing else', () => {
    expect(parseJsonObject(body({ TableName: 't' }))).toEqual({ TableName: 't' });
    expect(parseJsonObject(body([1]))).toBeUndefined();
    expect(parseJsonObject(Buffer.from('{'))).toBeUndefined();
  });
});

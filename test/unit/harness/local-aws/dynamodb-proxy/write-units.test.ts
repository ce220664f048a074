import { describe, expect, it } from 'vitest';
import {
  itemBytes,
  readUnits,
  transactionalWriteUnits,
  writeUnits,
} from '../../../../../harness/local-aws/dynamodb-proxy/write-units.js';

describe('item size by DynamoDB’s rule (attribute names + values)', () => {
  it('counts a string as its UTF-8 bytes, names included', () => {
    expect(itemBytes({ pk: { S: 'abc' } })).toBe(2 + 3);
    expect(itemBytes({ note: { S: 'é ü 😀' } })).toBe(4 + (2 + 1 + 2 + 1 + 4));
    expect(itemBytes({})).toBe(0);
  });

  it('counts a number as 1 byte per two significant digits, plus 1', () => {
    expect(itemBytes({ n: { N: '125' } })).toBe(1 + 3); // 3 digits → 2, + 1
    expect(itemBytes({ n: { N: '12' } })).toBe(1 + 2);
    // Leading and trailing zeros, sign and decimal point do not count.
    expect(itemBytes({ n: { N: '100' } })).toBe(1 + 2);
    expect(itemBytes({ n: { N: '-0.0012300' } })).toBe(1 + 3);
    expect(itemBytes({ n: { N: '0' } })).toBe(1 + 2);
  });

  it('counts binary as its bytes, booleans and null as 1, sets as the sum of their members', () => {
    expect(itemBytes({ b: { B: Buffer.from('hello').toString('base64') } })).toBe(1 + 5);
    expect(itemBytes({ t: { BOOL: true }, z: { NULL: true } })).toBe(1 + 1 + 1 + 1);
    expect(itemBytes({ ss: { SS: ['ab', 'cde'] } })).toBe(2 + 5);
    expect(itemBytes({ ns: { NS: ['1', '1234'] } })).toBe(2 + 2 + 3);
  });

  it('counts a list or a map as 3 bytes, plus each element and 1 byte per element', () => {
    expect(itemBytes({ l: { L: [{ S: 'ab' }, { N: '1' }] } })).toBe(1 + 3 + (1 + 2) + (1 + 2));
    expect(itemBytes({ m: { M: { a: { S: 'x' }, bc: { N: '12' } } } })).toBe(
      1 + 3 + (1 + 1 + 1) + (1 + 2 + 2),
    );
    expect(itemBytes({ l: { L: [] } })).toBe(1 + 3);
  });
});

describe('capacity units', () => {
  it('a standard write takes 1 unit per KB, rounded up, and at least 1', () => {
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1)).toBe(1);
    expect(writeUnits(1024)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
    expect(writeUnits(2048)).toBe(2);
    expect(writeUnits(2049)).toBe(3);
  });

  it('a transaction takes 2 units per KB of each item: two small items are 4, not 2', () => {
    expect(transactionalWriteUnits([100, 200])).toBe(4);
    // The case the meter (harness/local-aws/dynamodb-proxy/meter.ts) documents: a 1.5 KB item and a small one.
    expect(transactionalWriteUnits([1536, 100])).toBe(6);
    expect(transactionalWriteUnits([1024, 1025])).toBe(2 + 4);
    expect(transactionalWriteUnits([])).toBe(0);
  });

  it('a strongly consistent read takes 1 unit per 4 KB, at least 1', () => {
    expect(readUnits(0)).toBe(1);
    expect(readUnits(4096)).toBe(1);
    expect(readUnits(4097)).toBe(2);
    expect(readUnits(3 * 4096)).toBe(3);
  });
});

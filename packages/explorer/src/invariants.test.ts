import { describe, expect, it } from 'vitest';
import {
  allOf,
  appliedAtMostOnce,
  appliedFromList,
  appliedFromStream,
  eachAppliedOnce,
  neverBelow,
  noneLost,
  sumEquals,
} from './invariants.js';
import type { Change, FinalState } from './scenario.js';

const events = ['line-1', 'line-2', 'line-3'].map((id) => ({ id, body: {} }));

function final(
  items: Record<string, unknown>[],
  options: { changes?: Change[]; deadLetters?: string[] } = {},
): FinalState {
  return {
    events,
    tables: { stock: items },
    changes: options.changes ? { stock: options.changes } : {},
    deadLetters: (options.deadLetters ?? []).map((eventId) => ({ eventId, body: '{}', receiveCount: 3 })),
    cell: {
      id: 'cell',
      tables: { stock: 'cell-stock' },
      queueUrl: '',
      deadLetterQueueUrl: '',
      region: 'us-east-1',
      endpoints: { dynamodb: '', sqs: '' },
      credentials: { accessKeyId: '', secretAccessKey: '' },
    },
    deliveries: [],
  };
}

describe('counting applications', () => {
  it('from a list attribute: every entry of every item, a repeat counted twice', () => {
    const count = appliedFromList('stock', 'lines');
    const counts = count(
      final([
        { pk: 'A', lines: ['line-1', 'line-2', 'line-1'] },
        { pk: 'B', lines: ['line-3'] },
        { pk: 'C' },
      ]),
    );
    expect(Object.fromEntries(counts)).toEqual({ 'line-1': 2, 'line-2': 1, 'line-3': 1 });
  });

  it('from a list attribute: an attribute that is not a list says so', () => {
    expect(() => appliedFromList('stock', 'lines')(final([{ pk: 'A', lines: 'line-1' }]))).toThrow(
      /stock\.lines is not a list on \{"pk":"A"\}/,
    );
  });

  it('from the stream: each insert or modify that stamps the id, not a remove, not a modify that changed nothing', () => {
    const changes: Change[] = [
      { type: 'INSERT', keys: { pk: 'A' }, newImage: { pk: 'A', last: 'line-1' } },
      {
        type: 'MODIFY',
        keys: { pk: 'A' },
        oldImage: { pk: 'A', last: 'line-1' },
        newImage: { pk: 'A', last: 'line-1', n: 2 },
      },
      {
        type: 'MODIFY',
        keys: { pk: 'A' },
        oldImage: { pk: 'A', last: 'line-2' },
        newImage: { pk: 'A', last: 'line-2' },
      },
      { type: 'REMOVE', keys: { pk: 'A' }, oldImage: { pk: 'A', last: 'line-3' } },
    ];
    const counts = appliedFromStream('stock', 'last')(final([], { changes }));
    expect(Object.fromEntries(counts)).toEqual({ 'line-1': 2 });
  });

  it('from the stream: a table without one says how to give it one', () => {
    expect(() => appliedFromStream('stock', 'last')(final([]))).toThrow(/StreamSpecification/);
  });
});

describe('the checks', () => {
  const twiceAndMissing = final([{ pk: 'A', lines: ['line-1', 'line-1', 'line-2'] }], { deadLetters: [] });
  const count = appliedFromList('stock', 'lines');

  it('each applied once: the duplicate and the lost event, each named', async () => {
    expect(await eachAppliedOnce(count)(twiceAndMissing)).toEqual([
      'line-1 applied 2 times',
      'line-3 lost: never applied, not in the DLQ',
    ]);
  });

  it('each applied once: an event kept in the DLQ was not applied either', async () => {
    const kept = final([{ pk: 'A', lines: ['line-1', 'line-2'] }], { deadLetters: ['line-3'] });
    expect(await eachAppliedOnce(count)(kept)).toEqual(['line-3 never applied (in the DLQ)']);
    // None lost: kept is not lost.
    expect(await noneLost(count)(kept)).toEqual([]);
    expect(await noneLost(count, { deadLettersAreLost: true })(kept)).toEqual([
      'line-3 never applied (in the DLQ)',
    ]);
  });

  it('except: an event expected to be refused must not be applied at all', async () => {
    const refused = final([{ pk: 'A', lines: ['line-1', 'line-2', 'line-3'] }]);
    expect(await eachAppliedOnce(count, { except: ['line-3'] })(refused)).toEqual(['line-3 applied once']);
    expect(await appliedAtMostOnce(count)(refused)).toEqual([]);
  });

  it('a sum, a floor, and several checks as one', async () => {
    const state = final([
      { pk: 'A', stock: 4 },
      { pk: 'B', stock: -1 },
    ]);
    expect(await sumEquals({ table: 'stock', attribute: 'stock', expected: 3 })(state)).toEqual([]);
    expect(await sumEquals({ table: 'stock', attribute: 'stock', expected: () => 5 })(state)).toEqual([
      'stock.stock sums to 3, expected 5',
    ]);
    expect(await neverBelow('stock', 'stock')(state)).toEqual(['stock.stock went below 0: {"pk":"B"} at -1']);
    expect(
      await allOf(
        neverBelow('stock', 'stock'),
        sumEquals({ table: 'stock', attribute: 'stock', expected: 5 }),
      )(state),
    ).toHaveLength(2);
  });

  it('never below: a dip the stream saw counts, even if the final item is back above', async () => {
    const dipped = final([{ pk: 'A', stock: 2 }], {
      changes: [
        {
          type: 'MODIFY',
          keys: { pk: 'A' },
          oldImage: { pk: 'A', stock: 1 },
          newImage: { pk: 'A', stock: -1 },
        },
      ],
    });
    expect(await neverBelow('stock', 'stock')(dipped)).toEqual([
      'stock.stock went below 0: {"pk":"A"} at -1',
    ]);
  });
});

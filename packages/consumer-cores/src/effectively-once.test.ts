import {
  type CancellationReason,
  DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import * as v from 'valibot';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEffectivelyOnceHandler, type TransactItem } from './effectively-once.js';
import { WriteRefusedError } from './errors.js';
import { EventSchema, parseWith } from './event.js';
import { batch, memoryLogger, NOW, record } from './test/records.js';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));

const Credit = v.looseObject({ ...EventSchema.entries, accountId: v.string(), amountCents: v.number() });
type Credit = v.InferOutput<typeof Credit>;

const credit = (event: Credit): TransactItem[] => [
  {
    Update: {
      TableName: 'ledger',
      Key: { pk: `ACCOUNT#${event.accountId}` },
      UpdateExpression: 'ADD balanceCents :amount',
      ExpressionAttributeValues: { ':amount': event.amountCents },
    },
  },
];

const event = (overrides: Partial<Credit> = {}): Credit => ({
  eventId: 'evt-1',
  createdAt: new Date(NOW - 1000).toISOString(),
  accountId: 'acct-1',
  amountCents: 250,
  ...overrides,
});

const handler = (options: Partial<Parameters<typeof createEffectivelyOnceHandler<Credit>>[0]> = {}) =>
  createEffectivelyOnceHandler<Credit>({
    ddb: client,
    markerTable: 'ledger',
    parse: parseWith(Credit),
    writesFor: credit,
    clock: () => NOW,
    logger: memoryLogger(),
    retry: { attempts: 3, baseDelayMs: 0 },
    ...options,
  });

const cancelled = (...reasons: CancellationReason[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: reasons,
  });

/** The cancellation of a transaction whose marker already holds the payload fingerprinted `hash`. */
const markerHolds = (hash: string) =>
  cancelled(
    { Code: 'ConditionalCheckFailed', Item: { payloadHash: { S: hash }, dedupeUntil: { N: '9999999999' } } },
    { Code: 'None' },
  );

/** The fingerprint the core stored for `stored`, read back from the marker it sent. */
async function fingerprintOf(stored: Credit): Promise<string> {
  ddb.reset();
  ddb.on(TransactWriteCommand).resolves({});
  await handler()(batch(record(stored)));
  const marker = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems?.[0]?.Update;
  ddb.reset();
  return String(marker?.ExpressionAttributeValues?.[':payloadHash']);
}

describe('createEffectivelyOnceHandler', () => {
  beforeEach(() => {
    ddb.reset();
    ddb.on(TransactWriteCommand).resolves({});
  });

  it('sends the marker and the team’s writes in ONE transaction, the marker first, conditional on no marker', async () => {
    const response = await handler()(batch(record(event())));

    expect(response).toEqual({ batchItemFailures: [] });
    const sent = ddb.commandCalls(TransactWriteCommand);
    expect(sent).toHaveLength(1);
    const [marker, ...writes] = sent[0]?.args[0].input.TransactItems ?? [];
    expect(marker?.Update).toMatchObject({
      TableName: 'ledger',
      Key: { pk: 'EVENT#evt-1' },
      ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(marker?.Update?.ExpressionAttributeValues).toMatchObject({
      ':now': NOW / 1000,
      ':dedupeUntil': NOW / 1000 + 30 * 24 * 3600,
    });
    expect(writes).toEqual(credit(event()));
  });

  it('runs with nothing but its own settings: a client, a table and the writes', async () => {
    const bare = createEffectivelyOnceHandler({ ddb: client, markerTable: 'markers', writesFor: () => [] });

    const response = await bare(
      batch(record({ eventId: 'e-1', createdAt: new Date().toISOString(), extra: 1 })),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('skips a redelivery whose marker holds the same payload, and signals the duplicate', async () => {
    const hash = await fingerprintOf(event());
    ddb.on(TransactWriteCommand).rejects(markerHolds(hash));
    const duplicates: string[] = [];

    const response = await handler({ signals: { duplicate: (e) => void duplicates.push(e.eventId) } })(
      batch(record(event(), { receiveCount: 2 })),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(duplicates).toEqual(['evt-1']);
  });

  it('fails a reused event id whose marker holds another payload, and signals it', async () => {
    const hash = await fingerprintOf(event({ amountCents: 999 }));
    ddb.on(TransactWriteCommand).rejects(markerHolds(hash));
    const reused: string[] = [];
    const failing = record(event());

    const response = await handler({ signals: { conflictingReuse: (e) => void reused.push(e.eventId) } })(
      batch(failing),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    expect(reused).toEqual(['evt-1']);
  });

  it('retries a transaction cancelled by a conflict, then applies it', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'TransactionConflict' }))
      .resolves({});
    const retried: string[] = [];

    const response = await handler({ signals: { retried: (e) => void retried.push(e.eventId) } })(
      batch(record(event())),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
    expect(retried).toEqual(['evt-1']);
  });

  it.each([
    [
      'a persistent conflict, after its attempts',
      cancelled({ Code: 'TransactionConflict' }, { Code: 'None' }),
      3,
    ],
    [
      'a failed condition on the team’s write',
      cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed' }),
      1,
    ],
    ['a validation error', cancelled({ Code: 'None' }, { Code: 'ValidationError' }), 1],
  ])('reports %s as a failed record, never as applied', async (_name, error, attempts) => {
    ddb.on(TransactWriteCommand).rejects(error);
    const failing = record(event());

    const response = await handler()(batch(failing));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(attempts);
  });

  it('refuses an event older than its marker remembers before any write, and signals it', async () => {
    const tooOld: number[] = [];
    const old = record(event({ createdAt: new Date(NOW - 91_000).toISOString() }));

    const response = await handler({
      markerTtlSeconds: 100,
      signals: { tooOld: (_e, age) => void tooOld.push(age) },
    })(batch(old));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: old.messageId }] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(tooOld).toEqual([91]);
  });

  it.each([
    [
      '100 writes',
      Array.from({ length: 100 }, (_, i) => credit(event({ accountId: `a-${i}` }))[0] as TransactItem),
    ],
    [
      'a write on the marker’s own item',
      [
        {
          Update: {
            TableName: 'ledger',
            Key: { pk: 'EVENT#evt-1' },
            UpdateExpression: 'SET x = :x',
            ExpressionAttributeValues: { ':x': 1 },
          },
        },
      ],
    ],
    ['two writes on one item', [...credit(event()), ...credit(event())]],
    [
      'a Put on the marker’s own item, its table named by ARN',
      [
        {
          Put: {
            TableName: 'arn:aws:dynamodb:eu-west-1:123456789012:table/ledger',
            Item: { pk: 'EVENT#evt-1', x: 1 },
          },
        },
      ],
    ],
    [
      'over 4 MB',
      Array.from({ length: 5 }, (_, i) => ({
        Put: { TableName: 'ledger', Item: { pk: `big-${i}`, blob: 'x'.repeat(900_000) } },
      })),
    ],
  ])('refuses %s before sending: DynamoDB would refuse the transaction every time', async (_name, writes) => {
    const failing = record(event());

    const response = await handler({ writesFor: () => writes })(batch(failing));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('sizes writes the document client accepts (a bigint, a set, bytes) and sends them', async () => {
    const writes: TransactItem[] = [
      {
        Put: {
          TableName: 'ledger',
          Item: { pk: 'n', big: 2n ** 70n, tags: new Set(['a']), raw: new Uint8Array(3) },
        },
      },
    ];

    const response = await handler({ writesFor: () => writes })(batch(record(event())));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it("fails an event whose marker key holds another entity's item (no expiry), without calling it a duplicate", async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(
        cancelled({ Code: 'ConditionalCheckFailed', Item: { pk: { S: 'EVENT#evt-1' } } }, { Code: 'None' }),
      );
    const duplicates: string[] = [];
    const logger = memoryLogger();
    const failing = record(event());

    const response = await handler({
      logger,
      signals: { duplicate: (e) => void duplicates.push(e.eventId) },
    })(batch(failing));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    expect(duplicates).toEqual([]);
    expect(logger.lines.at(-1)?.attributes.error).toMatch(/^MarkerKeyInUseError/);
  });

  it('fails, once and typed, an event whose own write is refused by its condition, naming the write', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(
        cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed', Item: { balanceCents: { N: '3' } } }),
      );
    const logger = memoryLogger();
    const failing = record(event());

    const response = await handler({ logger })(batch(failing));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    // A business refusal is not transient: no retry inside the invocation.
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(logger.lines.at(-1)?.attributes.error).toMatch(
      /^WriteRefusedError: event evt-1: write 0 of its writes/,
    );
  });

  it('acknowledges a duplicate whose signal throws: a metric outage never dead-letters an applied event', async () => {
    const hash = await fingerprintOf(event());
    ddb.on(TransactWriteCommand).rejects(markerHolds(hash));
    const logger = memoryLogger();

    const response = await handler({
      logger,
      signals: {
        duplicate: () => {
          throw new Error('metrics unavailable');
        },
      },
    })(batch(record(event(), { receiveCount: 2 })));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(logger.lines.some((line) => line.message.startsWith('a signal failed'))).toBe(true);
  });

  it('keeps unknown fields and fails a body without an event id', async () => {
    const seen: unknown[] = [];
    const bad = record({ accountId: 'a', amountCents: 1 });

    const response = await handler({
      writesFor: (e) => {
        seen.push(e);
        return credit(e);
      },
    })(batch(record({ ...event(), note: 'kept' }), bad));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });
    expect(seen).toMatchObject([{ note: 'kept' }]);
  });

  it('on a FIFO queue, a failure fails the rest of its group and lets other groups go on', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'ValidationError' }))
      .resolves({});
    const first = record(event({ eventId: 'a-1' }), { group: 'a' });
    const behind = record(event({ eventId: 'a-2' }), { group: 'a' });
    const other = record(event({ eventId: 'b-1' }), { group: 'b' });

    const response = await handler()(batch(first, behind, other));

    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      first.messageId,
      behind.messageId,
    ]);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  describe('a business refusal, recorded once (onRefused)', () => {
    /** A stock decrement whose own expression names more than its condition: `#at`, `:at`. */
    const decrement: TransactItem = {
      Update: {
        TableName: 'stock',
        Key: { pk: 'SKU#A' },
        UpdateExpression: 'SET #stock = #stock - :q, #at = :at',
        ConditionExpression: '#stock >= :q',
        ExpressionAttributeNames: { '#stock': 'stock', '#at': 'updatedAt' },
        ExpressionAttributeValues: { ':q': 2, ':at': '2026-01-01T00:00:00.000Z' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
    const rejectedLine: TransactItem = {
      Put: { TableName: 'stock', Item: { pk: 'REJECTED#evt-1', reason: 'out of stock' } },
    };
    /** The credit first, the decrement second: the refused write is index 1. */
    const writesFor = (e: Credit) => [...credit(e), decrement];
    /** The first transaction, cancelled on the decrement (item 2: the marker is item 0). */
    const outOfStock = () =>
      cancelled(
        { Code: 'None' },
        { Code: 'None' },
        { Code: 'ConditionalCheckFailed', Item: { stock: { N: '1' } } },
      );
    /** The second transaction, cancelled on its negated check (item 1): the item changed in between. */
    const checkFailed = () =>
      cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed' }, { Code: 'None' });
    const transactions = () =>
      ddb.commandCalls(TransactWriteCommand).map((call) => call.args[0].input.TransactItems ?? []);
    const isSecond = (items: readonly TransactItem[]) => items[1]?.ConditionCheck !== undefined;

    it('gives onRefused the typed error, naming the refused write by its index and its item as it was', async () => {
      ddb.on(TransactWriteCommand).rejects(outOfStock());
      const seen: unknown[][] = [];

      await handler({
        writesFor,
        onRefused: (error, e) => {
          seen.push([error, e.eventId]);
          return 'retry';
        },
      })(batch(record(event())));

      expect(seen).toHaveLength(1);
      const [error, eventId] = seen[0] ?? [];
      expect(error).toBeInstanceOf(WriteRefusedError);
      expect(error).toMatchObject({ eventId: 'evt-1', index: 1, item: { stock: { N: '1' } } });
      expect(eventId).toBe('evt-1');
    });

    it("asks about every refused write, and records nothing when one of them says 'retry' (a version check beside the stock)", async () => {
      // DynamoDB names both: the credit (index 0, a business "no" here) and the decrement (index 1,
      // here the team's version check).
      ddb
        .on(TransactWriteCommand)
        .rejects(
          cancelled(
            { Code: 'None' },
            { Code: 'ConditionalCheckFailed' },
            { Code: 'ConditionalCheckFailed', Item: { stock: { N: '1' } } },
          ),
        );
      const asked: number[] = [];

      const response = await handler({
        writesFor,
        onRefused: (error) => {
          asked.push(error.index);
          return error.index === 0 ? 'record' : 'retry';
        },
      })(batch(record(event())));

      expect(asked).toEqual([0, 1]);
      expect(response.batchItemFailures).toHaveLength(1);
      expect(transactions().filter(isSecond)).toEqual([]);
    });

    it("on 'record', sends ONE second transaction: the marker refused, the negated check, the rejection writes; acknowledged", async () => {
      ddb.on(TransactWriteCommand).rejectsOnce(outOfStock()).resolves({});
      const logger = memoryLogger();

      const response = await handler({
        writesFor,
        logger,
        onRefused: () => 'record',
        rejectionWritesFor: () => [rejectedLine],
      })(batch(record(event())));

      expect(response).toEqual({ batchItemFailures: [] });
      const [first, second, ...more] = transactions();
      expect(more).toEqual([]);
      expect(first?.[0]?.Update?.ExpressionAttributeValues).toMatchObject({ ':outcome': 'applied' });
      const [marker, check, ...rejections] = second ?? [];
      // The same marker, under its own condition, saying what was decided.
      expect(marker?.Update).toMatchObject({
        Key: { pk: 'EVENT#evt-1' },
        ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now',
        ExpressionAttributeNames: { '#outcome': 'outcome' },
        ExpressionAttributeValues: { ':outcome': 'refused' },
      });
      // True when recorded: the refused item still fails the condition. Only the placeholders the
      // condition names: DynamoDB refuses unused ones (#at, :at).
      expect(check).toEqual({
        ConditionCheck: {
          TableName: 'stock',
          Key: { pk: 'SKU#A' },
          ConditionExpression: 'NOT (#stock >= :q)',
          ExpressionAttributeNames: { '#stock': 'stock' },
          ExpressionAttributeValues: { ':q': 2 },
        },
      });
      expect(rejections).toEqual([rejectedLine]);
      expect(logger.lines.at(-1)).toEqual({
        level: 'info',
        message: 'refusal recorded',
        attributes: { eventId: 'evt-1', index: 1 },
      });
    });

    it('sends no attribute names at all when the condition names none', async () => {
      ddb.on(TransactWriteCommand).rejectsOnce(outOfStock()).resolves({});
      const plain: TransactItem = {
        Update: {
          TableName: 'stock',
          Key: { pk: 'SKU#A' },
          UpdateExpression: 'SET stock = stock - :q, #at = :at',
          ConditionExpression: 'stock >= :q',
          ExpressionAttributeNames: { '#at': 'updatedAt' },
          ExpressionAttributeValues: { ':q': 2, ':at': 'now' },
        },
      };

      await handler({ writesFor: (e) => [...credit(e), plain], onRefused: () => 'record' })(
        batch(record(event())),
      );

      expect(transactions()[1]?.[1]).toStrictEqual({
        ConditionCheck: {
          TableName: 'stock',
          Key: { pk: 'SKU#A' },
          ConditionExpression: 'NOT (stock >= :q)',
          ExpressionAttributeValues: { ':q': 2 },
        },
      });
    });

    it('signals the recorded refusal with its typed error, once', async () => {
      ddb.on(TransactWriteCommand).rejectsOnce(outOfStock()).resolves({});
      const refused: [string, WriteRefusedError][] = [];

      await handler({
        writesFor,
        onRefused: () => 'record',
        signals: { refused: (e, error) => void refused.push([e.eventId, error]) },
      })(batch(record(event())));

      expect(refused).toHaveLength(1);
      const [eventId, error] = refused[0] ?? [];
      expect(eventId).toBe('evt-1');
      expect(error).toBeInstanceOf(WriteRefusedError);
      expect(error?.index).toBe(1);
    });

    it.each([
      ['no onRefused (the default)', undefined],
      ["onRefused saying 'retry'", () => 'retry' as const],
    ])('with %s, fails the record as before: one transaction, nothing recorded', async (_name, onRefused) => {
      ddb.on(TransactWriteCommand).rejectsOnce(outOfStock()).resolves({});
      const refused: string[] = [];
      const failing = record(event());
      const logger = memoryLogger();

      const response = await handler({
        writesFor,
        logger,
        ...(onRefused ? { onRefused } : {}),
        signals: { refused: (e) => void refused.push(e.eventId) },
      })(batch(failing));

      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
      expect(transactions()).toHaveLength(1);
      expect(refused).toEqual([]);
      expect(logger.lines.at(-1)?.attributes.error).toMatch(/^WriteRefusedError: event evt-1: write 1/);
    });

    it('goes back to the first transaction when the refused item changed before the refusal was recorded', async () => {
      ddb.on(TransactWriteCommand).rejectsOnce(outOfStock()).rejectsOnce(checkFailed()).resolves({});
      const refused: string[] = [];
      const retried: string[] = [];

      const response = await handler({
        writesFor,
        onRefused: () => 'record',
        signals: {
          refused: (e) => void refused.push(e.eventId),
          retried: (e) => void retried.push(e.eventId),
        },
      })(batch(record(event())));

      expect(response).toEqual({ batchItemFailures: [] });
      const [first, second, third, ...more] = transactions();
      expect(more).toEqual([]);
      expect(second && isSecond(second)).toBe(true);
      // The write now succeeds: applied, not refused.
      expect(third).toEqual(first);
      expect(third?.[0]?.Update?.ExpressionAttributeValues).toMatchObject({ ':outcome': 'applied' });
      expect(refused).toEqual([]);
      expect(retried).toEqual(['evt-1']);
    });

    it('fails the record for SQS to deliver again when the refusal stays undecided after its attempts', async () => {
      ddb
        .on(TransactWriteCommand)
        .callsFake((input: { TransactItems: TransactItem[] }) =>
          Promise.reject(isSecond(input.TransactItems) ? checkFailed() : outOfStock()),
        );
      const failing = record(event());

      const response = await handler({ writesFor, onRefused: () => 'record' })(batch(failing));

      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
      // Three attempts (the retry setting), each a refusal and a check that failed.
      expect(transactions().map(isSecond)).toEqual([false, true, false, true, false, true]);
    });

    it('skips as a duplicate when the second transaction finds the marker there', async () => {
      const hash = await fingerprintOf(event());
      ddb.on(TransactWriteCommand).rejectsOnce(outOfStock()).rejects(markerHolds(hash));
      const duplicates: string[] = [];
      const refused: string[] = [];

      const response = await handler({
        writesFor,
        onRefused: () => 'record',
        signals: {
          duplicate: (e) => void duplicates.push(e.eventId),
          refused: (e) => void refused.push(e.eventId),
        },
      })(batch(record(event())));

      expect(response).toEqual({ batchItemFailures: [] });
      expect(transactions()).toHaveLength(2);
      expect(duplicates).toEqual(['evt-1']);
      expect(refused).toEqual([]);
    });

    it('fails a reused event id the second transaction finds, as the first would', async () => {
      const hash = await fingerprintOf(event({ amountCents: 999 }));
      ddb.on(TransactWriteCommand).rejectsOnce(outOfStock()).rejects(markerHolds(hash));
      const failing = record(event());

      const response = await handler({ writesFor, onRefused: () => 'record' })(batch(failing));

      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    });

    it('refuses to record a refused Put, which names no key to check again, and fails the record', async () => {
      ddb.on(TransactWriteCommand).rejects(outOfStock());
      const failing = record(event());
      const logger = memoryLogger();
      const reserve: TransactItem = {
        Put: {
          TableName: 'stock',
          Item: { pk: 'RESERVATION#A', quantity: 2 },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      };

      const response = await handler({
        writesFor: (e) => [...credit(e), reserve],
        logger,
        onRefused: () => 'record',
      })(batch(failing));

      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
      expect(transactions()).toHaveLength(1);
      expect(logger.lines.at(-1)?.attributes.error).toMatch(
        /^RefusalNotRecordableError: event evt-1: write 1/,
      );
    });
  });
});

import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  createEffectivelyOnceHandler,
  type EffectivelyOnceOptions,
  RefusalDecision,
} from '@sqs-delivery-semantics/consumer-cores/effectively-once';
import { WriteRefusedError } from '@sqs-delivery-semantics/consumer-cores/errors';
import { EventSchema, parseWith } from '@sqs-delivery-semantics/consumer-cores/event';
import { redelivered, sqsEvent, sqsRecord } from '@sqs-delivery-semantics/consumer-cores/testing';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

/**
 * Business refusals, decided once and recorded once, against the real DynamoDB Local (its own
 * conditions, its own transactions, its own validation of the negated check): out of stock is a
 * "no" to record, a stale version a reason to retry.
 */
const shared = await sharedDynamoDb('stock-refusal');
/** Stock items (`SKU#…`), markers (`EVENT#…`) and rejected lines (`REJECTED#…`), one table. */
const TABLE = `${shared.tablePrefix}stock`;
let client: DynamoDBClient;
let ddb: DynamoDBDocumentClient;

beforeAll(async () => {
  client = new DynamoDBClient({
    endpoint: shared.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  ddb = DynamoDBDocumentClient.from(client);
  await client.send(
    new CreateTableCommand({
      TableName: TABLE,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
});

afterAll(async () => {
  await client?.send(new DeleteTableCommand({ TableName: TABLE }));
  client?.destroy();
});

const Order = v.looseObject({
  ...EventSchema.entries,
  kind: v.literal('order'),
  sku: v.string(),
  quantity: v.number(),
});
/** A price change under an optimistic version: a stale version lost a race, not a business "no". */
const Reprice = v.looseObject({
  ...EventSchema.entries,
  kind: v.literal('reprice'),
  sku: v.string(),
  priceCents: v.number(),
  expectedVersion: v.number(),
});
const StockEvent = v.variant('kind', [Order, Reprice]);
type StockEvent = v.InferOutput<typeof StockEvent>;

const order = (sku: string, quantity: number) =>
  sqsRecord({ eventId: randomUUID(), createdAt: new Date().toISOString(), kind: 'order', sku, quantity });
const reprice = (sku: string, priceCents: number, expectedVersion: number) =>
  sqsRecord({
    eventId: randomUUID(),
    createdAt: new Date().toISOString(),
    kind: 'reprice',
    sku,
    priceCents,
    expectedVersion,
  });
const eventIdOf = (record: { readonly body: string }) => (JSON.parse(record.body) as StockEvent).eventId;

/** The stock example's handler, and what its callback and signals saw. */
function stockHandler(overrides: Partial<EffectivelyOnceOptions<StockEvent>> = {}) {
  const seen = {
    decided: [] as WriteRefusedError[],
    refused: [] as { eventId: string; error: WriteRefusedError }[],
    duplicates: [] as string[],
    retried: [] as string[],
    logged: [] as string[],
  };
  const log = (message: string) => void seen.logged.push(message);
  const handler = createEffectivelyOnceHandler<StockEvent>({
    ddb,
    markerTable: TABLE,
    parse: parseWith(StockEvent),
    writesFor: (event) => [
      event.kind === 'order'
        ? {
            Update: {
              TableName: TABLE,
              Key: { pk: `SKU#${event.sku}` },
              // `:at` is the update's own: the negated check must leave it out, or DynamoDB refuses it.
              UpdateExpression: 'SET stock = stock - :q, updatedAt = :at',
              ConditionExpression: 'stock >= :q',
              ExpressionAttributeValues: { ':q': event.quantity, ':at': event.createdAt },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          }
        : {
            Update: {
              TableName: TABLE,
              Key: { pk: `SKU#${event.sku}` },
              UpdateExpression: 'SET priceCents = :price, #version = :next',
              ConditionExpression: '#version = :v',
              ExpressionAttributeNames: { '#version': 'version' },
              ExpressionAttributeValues: {
                ':price': event.priceCents,
                ':v': event.expectedVersion,
                ':next': event.expectedVersion + 1,
              },
            },
          },
    ],
    // Write 0 of an order is the decrement: out of stock is the business's "no". A version check
    // that fails lost a race: retried.
    onRefused: (error, event) => {
      seen.decided.push(error);
      return event.kind === 'order' && error.index === 0 ? 'record' : 'retry';
    },
    rejectionWritesFor: (event) =>
      event.kind === 'order'
        ? [
            {
              Put: {
                TableName: TABLE,
                Item: {
                  pk: `REJECTED#${event.eventId}`,
                  sku: event.sku,
                  quantity: event.quantity,
                  reason: 'out of stock',
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ]
        : [],
    retry: { attempts: 3, baseDelayMs: 5 },
    logger: { info: log, warn: log, error: log },
    signals: {
      refused: (event, error) => void seen.refused.push({ eventId: event.eventId, error }),
      duplicate: (event) => void seen.duplicates.push(event.eventId),
      retried: (event) => void seen.retried.push(event.eventId),
    },
    ...overrides,
  });
  return { handler, seen };
}

async function stock(sku: string, units: number, version = 1): Promise<void> {
  await ddb.send(
    new PutCommand({ TableName: TABLE, Item: { pk: `SKU#${sku}`, stock: units, version, priceCents: 100 } }),
  );
}

async function item(pk: string): Promise<Record<string, unknown> | undefined> {
  return (await ddb.send(new GetCommand({ TableName: TABLE, Key: { pk }, ConsistentRead: true }))).Item;
}

/** Every item of the table whose key starts with one of these, sorted by key. */
async function itemsOf(...prefixes: string[]): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await ddb.send(new ScanCommand({ TableName: TABLE, ConsistentRead: true }));
  return Items.filter((found) => prefixes.some((prefix) => String(found.pk).startsWith(prefix))).sort(
    (a, b) => String(a.pk).localeCompare(String(b.pk)),
  );
}

describe('stock refusals with the effectively-once core, on DynamoDB Local', () => {
  it('records an out-of-stock order once: acknowledged, a refused marker and one rejected line, never retried', async () => {
    const sku = randomUUID();
    await stock(sku, 1);
    const { handler, seen } = stockHandler();
    const tooMany = order(sku, 2);
    const id = eventIdOf(tooMany);

    const response = await handler(sqsEvent(tooMany));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(await item(`EVENT#${id}`)).toMatchObject({ outcome: 'refused', payloadHash: expect.any(String) });
    expect(await itemsOf(`REJECTED#${id}`)).toEqual([
      { pk: `REJECTED#${id}`, sku, quantity: 2, reason: 'out of stock' },
    ]);
    expect(await item(`SKU#${sku}`)).toMatchObject({ stock: 1 });
    // The typed error reached the callback and the signal: write 0, the item as DynamoDB saw it.
    expect(seen.decided).toHaveLength(1);
    expect(seen.refused).toHaveLength(1);
    const refusal = seen.refused[0];
    expect(refusal?.eventId).toBe(id);
    expect(refusal?.error).toBeInstanceOf(WriteRefusedError);
    expect(refusal?.error.index).toBe(0);
    expect(refusal?.error.item).toMatchObject({ stock: { N: '1' } });
    expect(seen.retried).toEqual([]);
    expect(seen.logged).toContain('refusal recorded');
  });

  it('skips a redelivery of a recorded refusal as a duplicate, writing nothing', async () => {
    const sku = randomUUID();
    await stock(sku, 1);
    const { handler, seen } = stockHandler();
    const tooMany = order(sku, 2);
    await handler(sqsEvent(tooMany));
    const before = await itemsOf(
      `SKU#${sku}`,
      `EVENT#${eventIdOf(tooMany)}`,
      `REJECTED#${eventIdOf(tooMany)}`,
    );

    const response = await handler(sqsEvent(redelivered(tooMany)));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(seen.duplicates).toEqual([eventIdOf(tooMany)]);
    // Decided once: the redelivery never reached the callback, and nothing was written again.
    expect(seen.decided).toHaveLength(1);
    expect(seen.refused).toHaveLength(1);
    expect(
      await itemsOf(`SKU#${sku}`, `EVENT#${eventIdOf(tooMany)}`, `REJECTED#${eventIdOf(tooMany)}`),
    ).toEqual(before);
  });

  it('still retries a version conflict: reported in batchItemFailures, nothing recorded', async () => {
    const sku = randomUUID();
    await stock(sku, 5, 2);
    const { handler, seen } = stockHandler();
    const stale = reprice(sku, 250, 1);

    const response = await handler(sqsEvent(stale));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: stale.messageId }] });
    expect(seen.decided.map((error) => error.index)).toEqual([0]);
    expect(seen.refused).toEqual([]);
    expect(await item(`EVENT#${eventIdOf(stale)}`)).toBeUndefined();
    expect(await itemsOf(`REJECTED#${eventIdOf(stale)}`)).toEqual([]);
    expect(await item(`SKU#${sku}`)).toMatchObject({ version: 2, priceCents: 100 });
  });

  it('applies in-stock orders once, records the rest once, and never takes stock below zero', async () => {
    const sku = randomUUID();
    await stock(sku, 3);
    const { handler, seen } = stockHandler();
    // 3 in stock: 2 applied, 2 refused (1 left), 1 applied, 1 refused (0 left).
    const first = order(sku, 2);
    const tooMany = order(sku, 2);
    const last = order(sku, 1);
    const none = order(sku, 1);
    const ids = [first, tooMany, last, none].map(eventIdOf);

    const response = await handler(
      sqsEvent(first, tooMany, redelivered(first), last, none, redelivered(none)),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(await item(`SKU#${sku}`)).toMatchObject({ stock: 0 });
    const outcomes = await Promise.all(ids.map(async (id) => (await item(`EVENT#${id}`))?.outcome));
    expect(outcomes).toEqual(['applied', 'refused', 'applied', 'refused']);
    const rejected = await itemsOf(...ids.map((id) => `REJECTED#${id}`));
    expect(rejected.map((line) => line.pk)).toEqual([`REJECTED#${ids[1]}`, `REJECTED#${ids[3]}`].sort());
    expect(seen.refused.map((refusal) => refusal.eventId)).toEqual([ids[1], ids[3]]);
    expect(seen.duplicates).toEqual([ids[0], ids[3]]);
  });

  it('applies, and does not record, an order whose item was restocked between its refusal and the record', async () => {
    const sku = randomUUID();
    await stock(sku, 1);
    const restockOnce = { done: false };
    const { handler, seen } = stockHandler({
      // Another writer restocks while the core decides: the refusal is no longer true.
      onRefused: async () => {
        if (!restockOnce.done) {
          restockOnce.done = true;
          await ddb.send(
            new UpdateCommand({
              TableName: TABLE,
              Key: { pk: `SKU#${sku}` },
              UpdateExpression: 'ADD stock :more',
              ExpressionAttributeValues: { ':more': 5 },
            }),
          );
        }
        return RefusalDecision.record;
      },
    });
    const tooMany = order(sku, 2);

    const response = await handler(sqsEvent(tooMany));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(await item(`SKU#${sku}`)).toMatchObject({ stock: 4 });
    expect(await item(`EVENT#${eventIdOf(tooMany)}`)).toMatchObject({ outcome: 'applied' });
    expect(await itemsOf(`REJECTED#${eventIdOf(tooMany)}`)).toEqual([]);
    expect(seen.refused).toEqual([]);
    expect(seen.retried).toEqual([eventIdOf(tooMany)]);
  });
});

import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createAtLeastOnceHandler } from '@sqs-delivery-semantics/consumer-cores/at-least-once';
import { createEffectivelyOnceHandler } from '@sqs-delivery-semantics/consumer-cores/effectively-once';
import {
  appliedFromStream,
  assertHeld,
  type Exploration,
  type Explorer,
  eachAppliedOnce,
  type HandlerFactory,
  InvariantBroken,
  OwnClientsError,
  ScenarioError,
  startExplorer,
} from '@sqs-delivery-semantics/explorer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import {
  deleteFirst,
  ORDERS,
  ordersScenario,
  reserve,
  SILENT,
  workFirst,
} from '../support/orders-scenario.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

/**
 * The explorer's API as a team calls it (packages/explorer): its own handler, tables, events and
 * invariant, on fauxqs and DynamoDB Local. The five-order scenario's three classic outcomes; the
 * effectively-once core with its condition removed, failing with named cells; and broken
 * consumers reported as cells, never as the explorer's crash.
 */
let explorer: Explorer;
beforeAll(async () => {
  explorer = await startExplorer({ dynamodbEndpoint: (await sharedDynamoDb('explore-api')).endpoint });
}, 120_000);
afterAll(() => explorer?.stop());

/** The marker in the same transaction as the work, keyed on the order: the effectively-once core. */
const markerInTransaction: HandlerFactory<'stock'> = ({ ddb, tables }) =>
  createEffectivelyOnceHandler({
    ddb,
    markerTable: tables.stock,
    logger: SILENT,
    writesFor: (order) => [{ Update: reserve(tables.stock, order) }],
  });

/** The kill at the second event of the first batch, as each consumer's plan names it. */
const KILLED_AT_ORDER_2 = {
  "delete first, killed after the batch delete, before order-2's work":
    'killed-before@1:order-2:UpdateItem:1:1',
  "work first, killed after order-2's work, before the acknowledgement":
    'killed-before@1:batch:acknowledge:1:1',
} as const;

function cell(exploration: Exploration) {
  const [only] = exploration.cells;
  if (only === undefined) throw new Error('no cell ran');
  return only;
}

describe('the five-order scenario: five orders in batches of 2, killed at the second order of the first batch', () => {
  it.concurrent('delete first loses one order: order-2, deleted with its batch and never worked', async () => {
    const exploration = await explorer.explore(ordersScenario('delete-first', deleteFirst), {
      only: [KILLED_AT_ORDER_2["delete first, killed after the batch delete, before order-2's work"]],
    });
    expect(exploration.clean.held).toBe(true);
    expect(cell(exploration).violations).toEqual(['order-2 lost: never applied, not in the DLQ']);
  }, 60_000);

  it.concurrent('work first applies the first two orders twice', async () => {
    const exploration = await explorer.explore(ordersScenario('work-first', workFirst), {
      only: [KILLED_AT_ORDER_2["work first, killed after order-2's work, before the acknowledgement"]],
    });
    expect(exploration.clean.held).toBe(true);
    expect(cell(exploration).violations).toEqual(['order-1 applied 2 times', 'order-2 applied 2 times']);
  }, 60_000);

  it.concurrent('the marker in the transaction is exact killed at either point', async () => {
    const scenario = ordersScenario('marker-in-transaction', markerInTransaction);
    const [beforeWork, beforeAck] = await Promise.all([
      explorer.explore(scenario, { only: ['killed-before@1:order-2:TransactWriteItems:1:1'] }),
      explorer.explore(scenario, { only: ['killed-before@1:batch:acknowledge:1:1'] }),
    ]);
    // The kill lands where planned: the second order's write never left, or the batch's return.
    expect(beforeWork.cells[0]?.deliveries[0]?.ended).toBe('killed');
    expect(beforeAck.cells[0]?.deliveries[0]?.trace.map((step) => step.event)).toEqual([
      'order-1',
      'order-2',
      'batch',
    ]);
    assertHeld(beforeWork);
    assertHeld(beforeAck);
  }, 60_000);
});

describe('a FIFO queue: one group, batches of 2', () => {
  it('holds the group back after a batch that was not deleted, and delivers it in order in the next round', async () => {
    const oneGroup = ORDERS.slice(0, 4).map((order) => ({ ...order, groupId: 'SKU#A' }));
    const exploration = await explorer.explore(
      ordersScenario('fifo-work-first', workFirst, {
        events: oneGroup,
        batches: [2, 2],
        queue: { fifo: true },
      }),
      { only: ['killed-before@1:batch:acknowledge:1:1'] },
    );
    // The clean run: both batches in turn.
    expect(exploration.clean.deliveries.map((each) => each.events)).toEqual([
      ['order-1', 'order-2'],
      ['order-3', 'order-4'],
    ]);
    // Killed before its acknowledgement: order-3 and order-4 wait for the group's first two, even
    // though they were received (their receive count says so), and none overtakes.
    const [killed] = exploration.cells;
    expect(killed?.deliveries.map((each) => [each.events, each.receiveCount])).toEqual([
      [['order-1', 'order-2'], 1],
      [['order-1', 'order-2'], 2],
      [['order-3', 'order-4'], 2],
    ]);
    expect(killed?.violations).toEqual(['order-1 applied 2 times', 'order-2 applied 2 times']);
  }, 60_000);
});

describe("counting from a table's change stream", () => {
  it("counts each write that stamps the event, in DynamoDB Local's stream: work first, killed before its acknowledgement", async () => {
    const stamped: HandlerFactory<'stock'> = ({ ddb, tables }) =>
      createAtLeastOnceHandler({
        logger: SILENT,
        work: async (order) => {
          await ddb.send(
            new UpdateCommand({
              TableName: tables.stock,
              Key: { pk: 'SKU#A' },
              UpdateExpression: 'ADD reserved :quantity SET lastOrder = :order',
              ExpressionAttributeValues: { ':quantity': Number(order.quantity), ':order': order.eventId },
            }),
          );
        },
      });
    const scenario = ordersScenario('stamped', stamped, {
      tables: {
        stock: {
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
        },
      },
      invariant: eachAppliedOnce(appliedFromStream('stock', 'lastOrder')),
    });
    const exploration = await explorer.explore(scenario, { only: ['killed-before@1:batch:acknowledge:1:1'] });
    // The final item names order-5 only; the stream saw every write.
    expect(exploration.clean.violations).toEqual([]);
    expect(exploration.cells[0]?.violations).toEqual(['order-1 applied 2 times', 'order-2 applied 2 times']);
  }, 60_000);
});

describe('the effectively-once core with its condition removed, explored through the API', () => {
  const mutantDir = join(PROJECT_ROOT, '.explore', `mutant-${process.pid}`);
  afterAll(() => rm(mutantDir, { recursive: true, force: true }));

  it('fails with named cells: every redelivery after an applied transaction applies it again', async () => {
    // A copy of the cores inside the project (so it resolves this project's packages), the marker's
    // condition made always true: nothing stops a second application.
    await cp(join(PROJECT_ROOT, 'packages/consumer-cores/src'), mutantDir, { recursive: true });
    const file = join(mutantDir, 'effectively-once.ts');
    const source = await readFile(file, 'utf8');
    const condition = "ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now',";
    expect(source).toContain(condition);
    await writeFile(
      file,
      source.replace(
        condition,
        "ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now OR attribute_exists(#pk)',",
      ),
    );
    const mutant = (await import(pathToFileURL(file).href)) as {
      createEffectivelyOnceHandler: typeof createEffectivelyOnceHandler;
    };
    const scenario = ordersScenario(
      'effectively-once-without-its-condition',
      ({ ddb, tables }) =>
        mutant.createEffectivelyOnceHandler({
          ddb,
          markerTable: tables.stock,
          logger: SILENT,
          writesFor: (order) => [{ Update: reserve(tables.stock, order) }],
        }),
      { events: ORDERS.slice(0, 2), batches: [2] },
    );
    const exploration = await explorer.explore(scenario, {
      concurrency: 8,
      // And two deliveries of one order in flight at once (no deadline): the first schedules break
      // already (the second copy's transaction applies again), so a few are enough here.
      interleavings: { kinds: ['two-deliveries'], deadlines: false, maxSchedules: 6 },
    });

    const broken = exploration.cells.filter((each) => !each.held).map((each) => each.plan);
    expect(broken).toEqual(
      expect.arrayContaining([
        'killed-before@1:batch:acknowledge:1:1',
        'ack-not-applied@1:batch:acknowledge:1:1',
        'lost-then-killed@1:order-1:TransactWriteItems:1:1',
        'lost-error-seen@1:order-2:TransactWriteItems:1:1',
      ]),
    );
    expect(() => assertHeld(exploration)).toThrow(InvariantBroken);
    expect(() => assertHeld(exploration)).toThrow(
      /killed-before@1:batch:acknowledge:1:1: order-1 applied 2 times; order-2 applied 2 times\n\s+delivery 1 .*\n.*\n\s+replay: explorer\.explore\(scenario, \{ only: \['killed-before@1:batch:acknowledge:1:1'\] \}\)/,
    );
    // With no fault at all: the second delivery's transaction after the first's applies it again.
    const [twoDeliveries] = exploration.interleavings ?? [];
    const plain = twoDeliveries?.schedules.filter((run) => !run.held && !run.injected) ?? [];
    expect(plain.length).toBeGreaterThan(0);
    expect(() => assertHeld(exploration)).toThrow(
      /- two-deliveries:[AB,]+: order-1 applied 2 times\n\s+A: first delivery\s+B: second delivery\n[\s\S]*replay: explorer\.explore\(scenario, \{ cells: false, interleavings: \{ schedules: \['two-deliveries:/,
    );
  }, 120_000);
});

/**
 * The Knowledge Center's recipe ("How do I prevent duplicate messages…"): read the order's marker,
 * skip it if there, else do the work and write the marker. Check, then act: correct one invocation
 * at a time.
 */
const checkThenAct: HandlerFactory<'stock'> =
  ({ ddb, tables }) =>
  async (event) => {
    for (const record of event.Records) {
      const order = JSON.parse(record.body) as { eventId: string; quantity: number };
      const marker = { pk: `MARKER#${order.eventId}` };
      if ((await ddb.send(new GetCommand({ TableName: tables.stock, Key: marker }))).Item) continue;
      await ddb.send(new UpdateCommand(reserve(tables.stock, order)));
      await ddb.send(new PutCommand({ TableName: tables.stock, Item: marker }));
    }
    return { batchItemFailures: [] };
  };

describe('two invocations in flight at once: every interleaving of their steps', () => {
  const ONE_ORDER = { events: ORDERS.slice(0, 1), batches: [1] };

  it.concurrent('check-then-act applies an order twice with no fault: both deliveries read "absent" before either writes its marker, replayed from its name', async () => {
    const scenario = ordersScenario('check-then-act', checkThenAct, ONE_ORDER);
    // Found by the enumeration (the mutant below, and test:soak's every schedule); here by its name.
    const exploration = await explorer.explore(scenario, {
      cells: false,
      interleavings: { schedules: ['two-deliveries:A,B,B,A,A,B,B,B'] },
    });
    const [run] = exploration.interleavings?.[0]?.schedules ?? [];
    expect(run?.injected).toBe(false);
    expect(run?.timeline.map((entry) => `${entry.actor} ${entry.label}`)).toEqual([
      'A GetItem order-1',
      'B receive (its second delivery)',
      'B GetItem order-1',
      'A UpdateItem order-1',
      'A PutItem order-1',
      'B UpdateItem order-1',
      'B PutItem order-1',
      'B acknowledge: the mapping deletes',
      'A acknowledge: the mapping deletes',
    ]);
    expect(run?.violations).toEqual(['order-1 applied 2 times']);
    expect(() => assertHeld(exploration)).toThrow(
      /- two-deliveries:A,B,B,A,A,B,B,B: order-1 applied 2 times/,
    );
  }, 120_000);

  it.concurrent('the effectively-once core is exact in every schedule of two orders on one item, its conflicts retried', async () => {
    const scenario = ordersScenario('marker-in-transaction', markerInTransaction, {
      events: ORDERS.slice(0, 2),
      batches: [1, 1],
    });
    const exploration = await explorer.explore(scenario, {
      cells: false,
      interleavings: { kinds: ['hot-key'] },
      concurrency: 8,
    });
    // Two deliveries of one event: the lab's effectively-once in cores.test.ts, every mode in test:soak.
    const [hotKey] = exploration.interleavings ?? [];
    expect(hotKey?.exhaustive).toBe(true);
    // The hot key: the two transactions on one SKU, one refused with TransactionConflict and retried.
    const conflicts = hotKey?.schedules.filter((run) =>
      run.timeline.some((entry) => entry.note?.startsWith('refused: TransactionConflict')),
    );
    expect(conflicts?.length).toBeGreaterThan(0);
    assertHeld(exploration);
  }, 120_000);
});

describe('a broken consumer is a cell with its outcome, never a crash of the explorer', () => {
  const oneOrder = { events: ORDERS.slice(0, 1), batches: [1] };

  it.concurrent('a handler that throws: each delivery threw, the order ends in the DLQ', async () => {
    const exploration = await explorer.explore(
      ordersScenario(
        'throws',
        () => async () => {
          throw new Error('boom');
        },
        {
          ...oneOrder,
          queue: { maxReceiveCount: 2 },
          // What the explorer read of the DLQ, and what the invariant reads itself (as the lab's
          // verifier sweeps it): the same message, still visible to it.
          invariant: async (final) => {
            const sqs = new SQSClient({
              region: final.cell.region,
              credentials: final.cell.credentials,
              endpoint: final.cell.endpoints.sqs,
            });
            const { Messages = [] } = await sqs.send(
              new ReceiveMessageCommand({ QueueUrl: final.cell.deadLetterQueueUrl, MaxNumberOfMessages: 10 }),
            );
            sqs.destroy();
            const seen = final.deadLetters.map((letter) => letter.eventId);
            return [`${seen.join(',')} in the DLQ, ${Messages.length} visible to the invariant`];
          },
        },
      ),
    );
    expect(exploration.clean.deliveries.map((each) => [each.ended, each.error])).toEqual([
      ['threw', 'Error: boom'],
      ['threw', 'Error: boom'],
    ]);
    expect(exploration.clean.violations).toEqual(['order-1 in the DLQ, 1 visible to the invariant']);
    expect(exploration.cells).toEqual([]);
  }, 60_000);

  it.concurrent('a handler that returns garbage: the whole batch failed, as Lambda fails it', async () => {
    const exploration = await explorer.explore(
      ordersScenario(
        'garbage',
        ({ ddb, tables }) =>
          async (event) => {
            for (const record of event.Records)
              await ddb.send(new UpdateCommand(reserve(tables.stock, JSON.parse(record.body))));
            return { batchItemFailures: [{ itemIdentifier: 42 }] };
          },
        { ...oneOrder, queue: { maxReceiveCount: 2 } },
      ),
      { only: ['killed-before@1:order-1:UpdateItem:1:1'] },
    );
    expect(exploration.clean.deliveries[0]?.error).toMatch(
      /returned .*itemIdentifier.*: not a batch response Lambda reads, so the whole batch failed/,
    );
    expect(exploration.clean.violations).toEqual(['order-1 applied 2 times']);
    expect(exploration.cells.map((each) => each.plan)).toEqual(['killed-before@1:order-1:UpdateItem:1:1']);
  }, 60_000);

  it.concurrent('a handler that never returns: timed out at the function timeout', async () => {
    const exploration = await explorer.explore(
      ordersScenario('never-returns', () => () => new Promise(() => undefined), {
        ...oneOrder,
        queue: { maxReceiveCount: 1 },
        functionTimeoutMs: 300,
      }),
    );
    expect(exploration.clean.deliveries.map((each) => each.ended)).toEqual(['timed-out']);
    expect(exploration.clean.timedOut).toBe(true);
    expect(exploration.clean.violations).toEqual(['order-1 never applied (in the DLQ)']);
  }, 60_000);

  it.concurrent('a marker sent outside the transaction: the failing cells, read from the final state', async () => {
    // The team's copy sent its marker as its own conditional write, before the work, and skips an
    // order whose marker is there: not atomic with the work. No evidence rides on the writes.
    const markerFirst: HandlerFactory<'stock'> =
      ({ ddb, tables }) =>
      async (event) => {
        for (const record of event.Records) {
          const order = JSON.parse(record.body);
          try {
            await ddb.send(
              new PutCommand({
                TableName: tables.stock,
                Item: { pk: `EVENT#${order.eventId}` },
                ConditionExpression: 'attribute_not_exists(pk)',
              }),
            );
          } catch (error) {
            if ((error as Error).name === 'ConditionalCheckFailedException') continue;
            throw error;
          }
          await ddb.send(new UpdateCommand(reserve(tables.stock, order)));
        }
      };
    const exploration = await explorer.explore(
      ordersScenario('marker-outside', markerFirst, { ...oneOrder }),
    );
    expect(exploration.clean.held).toBe(true);
    const broken = Object.fromEntries(
      exploration.cells.filter((each) => !each.held).map((each) => [each.plan, each.violations.join('; ')]),
    );
    // Killed between the marker and the work, or the marker's response lost: the redelivery (or the
    // SDK's own retry) finds the marker and skips the order.
    expect(broken).toMatchObject({
      'killed-before@1:order-1:UpdateItem:1:1': 'order-1 lost: never applied, not in the DLQ',
      'response-lost@1:order-1:PutItem:1:1': 'order-1 lost: never applied, not in the DLQ',
    });
    // The work's lost response, retried by the SDK: applied twice.
    expect(broken['response-lost@1:order-1:UpdateItem:1:1']).toBe('order-1 applied 2 times');
  }, 60_000);

  it.concurrent('a handler that changes its event: the mapping still deletes and redelivers its own records', async () => {
    const exploration = await explorer.explore(
      ordersScenario(
        'shifts-its-records',
        ({ ddb, tables }) =>
          async (event) => {
            for (let record = event.Records.shift(); record; record = event.Records.shift()) {
              await ddb.send(new UpdateCommand(reserve(tables.stock, JSON.parse(record.body))));
            }
          },
        { ...oneOrder },
      ),
      { only: ['killed-before@1:batch:acknowledge:1:1'] },
    );
    expect(exploration.cells[0]?.deliveries.map((each) => each.receiveCount)).toEqual([1, 2]);
    expect(exploration.cells[0]?.violations).toEqual(['order-1 applied 2 times']);
  }, 60_000);

  it.concurrent('a write the invariant cannot read: a violation saying so', async () => {
    const exploration = await explorer.explore(
      ordersScenario(
        'unreadable',
        ({ ddb, tables }) =>
          async (event) => {
            for (const _ of event.Records) {
              await ddb.send(
                new PutCommand({ TableName: tables.stock, Item: { pk: 'SKU#A', orders: 'not a list' } }),
              );
            }
          },
        { ...oneOrder },
      ),
    );
    expect(exploration.clean.violations).toEqual([
      expect.stringMatching(
        /^the invariant could not read the final state: TypeError: stock\.orders is not a list/,
      ),
    ]);
  }, 60_000);

  it('a handler that builds its own clients is refused, naming the fix', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { DynamoDBDocumentClient } = await import('@aws-sdk/lib-dynamodb');
    // What the README's Lambda entry does at module scope, pointed nowhere reachable (never AWS).
    const own = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:9',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
        maxAttempts: 1,
      }),
    );
    const scenario = ordersScenario(
      'own-clients',
      ({ tables }) =>
        async (event) => {
          for (const record of event.Records)
            await own.send(new UpdateCommand(reserve(tables.stock, JSON.parse(record.body))));
        },
      { ...oneOrder, queue: { maxReceiveCount: 1 } },
    );
    await expect(explorer.explore(scenario)).rejects.toThrow(OwnClientsError);
    await expect(explorer.explore(scenario)).rejects.toThrow(
      /builds its own clients.*handler: \(\{ ddb, tables \}\) =>/s,
    );
  }, 60_000);

  it('a scenario it cannot run gets a ScenarioError', async () => {
    await expect(
      explorer.explore(ordersScenario('big', deleteFirst, { queue: { batchSize: 11 } })),
    ).rejects.toThrow(ScenarioError);
    await expect(
      explorer.explore(ordersScenario('many', deleteFirst, { queue: { maxReceiveCount: 0 } })),
    ).rejects.toThrow(/maxReceiveCount 0: SQS takes 1 to 1000/);
    await expect(
      explorer.explore(ordersScenario('slow', deleteFirst, { functionTimeoutMs: 10 })),
    ).rejects.toThrow(/functionTimeoutMs 10: from 100 to 60000/);
    await expect(explorer.explore(ordersScenario('none', deleteFirst), { only: [] })).rejects.toThrow(
      /only: \[\] names no cell/,
    );
  });
});

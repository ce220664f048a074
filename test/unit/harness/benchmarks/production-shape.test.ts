import { SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { STATE_CONDITION } from '../../../../functions/shared/one-write-credits.js';
import { syntheticBodies } from '../../../../harness/benchmarks/floor.js';
import {
  PRODUCTION_SHAPES,
  type ProductionShape,
  processBatch as processShape,
} from '../../../../harness/benchmarks/production-shape.js';
import { consumerDeps } from '../../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../../support/sqs-events.js';

const shape = (mode: 'at-least-once' | 'state-upsert'): ProductionShape => {
  const found = PRODUCTION_SHAPES[mode];
  if (!found) throw new Error(`no production shape for ${mode}`);
  return found;
};
/** at-least-once's production shape, the yardstick. */
const processBatch = (...args: DropFirst<Parameters<typeof processShape>>) =>
  processShape(shape('at-least-once'), ...args);
type DropFirst<T extends unknown[]> = T extends [unknown, ...infer Rest] ? Rest : never;

/** The credits of a batch (the delivery counter is an UpdateItem too). */
const credits = (ddb: ReturnType<typeof mockClient>) =>
  ddb
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input)
    .filter((input) => String(input.Key?.sk).startsWith('BAL#'));

describe('the bench yardstick: at-least-once in its production shape', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
  });

  it('credits with ONE UpdateItem that ADDs to the balance: no transaction, no application record', async () => {
    const body = messageBody({ runId: 'run-y', eventId: 'evt-y', accountId: 'acct-3', amountCents: 4000 });

    const result = await processBatch(
      sqsEvent(sqsRecord(body)),
      lambdaContext,
      consumerDeps('at-least-once'),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
    expect(credits(ddb)).toEqual([
      {
        TableName: expect.any(String),
        Key: { pk: 'RUN#run-y#MODE#at-least-once', sk: 'BAL#acct-3' },
        UpdateExpression: 'ADD balanceCents :amount',
        ExpressionAttributeValues: { ':amount': 4000 },
      },
    ]);
    // Nothing else is written per message: no item keyed on the event id.
    const keys = ddb.commandCalls(UpdateCommand).map((call) => String(call.args[0].input.Key?.sk));
    expect(keys.filter((sk) => sk.startsWith('APP#'))).toEqual([]);
  });

  it('applies a redelivery again: it adds the amount a second time (what at-least-once means)', async () => {
    const body = messageBody({ eventId: 'evt-twice', amountCents: 250 });

    await processBatch(sqsEvent(sqsRecord(body)), lambdaContext, consumerDeps('at-least-once'));
    await processBatch(
      sqsEvent(sqsRecord(body, { receiveCount: 2 })),
      lambdaContext,
      consumerDeps('at-least-once'),
    );

    expect(credits(ddb).map((input) => input.ExpressionAttributeValues?.[':amount'])).toEqual([250, 250]);
  });

  it('reports a record whose write failed, and acknowledges the others', async () => {
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-bad' } }).rejects(new Error('throttled'));
    const good = sqsRecord(messageBody({ accountId: 'acct-ok' }));
    const bad = sqsRecord(messageBody({ accountId: 'acct-bad' }));

    const result = await processBatch(sqsEvent(good, bad), lambdaContext, consumerDeps('at-least-once'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });
  });
});

describe('state-upsert in its production shape', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
  });

  it("writes ONE conditional UpdateItem, the handler's state write, and no per-event record", async () => {
    const body = messageBody({ runId: 'run-s', eventId: 'evt-s', accountId: 'acct-2', amountCents: 40 });

    const result = await processShape(
      shape('state-upsert'),
      sqsEvent(sqsRecord({ ...body, seq: 3, balanceAfterCents: 140 })),
      lambdaContext,
      consumerDeps('state-upsert'),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(credits(ddb)).toEqual([
      expect.objectContaining({
        Key: { pk: 'RUN#run-s#MODE#state-upsert', sk: 'BAL#acct-2' },
        UpdateExpression: 'SET balanceCents = :b, version = :seq, #ttl = :ttl',
        ConditionExpression: STATE_CONDITION,
        ExpressionAttributeValues: expect.objectContaining({ ':b': 140, ':seq': 3 }),
      }),
    ]);
    const keys = ddb.commandCalls(UpdateCommand).map((call) => String(call.args[0].input.Key?.sk));
    expect(keys.filter((sk) => sk.startsWith('APP#'))).toEqual([]);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('acknowledges a superseded state (failed condition) and fails a body without its state', async () => {
    const failed = Object.assign(new Error('The conditional request failed'), {
      name: 'ConditionalCheckFailedException',
    });
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-old' } }).rejects(failed);
    const superseded = sqsRecord({ ...messageBody({ accountId: 'acct-old' }), balanceAfterCents: 5 });
    const stateless = sqsRecord(messageBody({ accountId: 'acct-none', balanceAfterCents: undefined }));

    const result = await processShape(
      shape('state-upsert'),
      sqsEvent(superseded, stateless),
      lambdaContext,
      consumerDeps('state-upsert'),
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: stateless.messageId }] });
  });
});

describe("the bench's synthetic events", () => {
  it("carry each account's seq and its running balance, as the producer stamps them", () => {
    const bodies = syntheticBodies('run-b', 5, 2);

    expect(
      bodies.map((body) => [body.accountId, body.seq, body.amountCents, body.balanceAfterCents]),
    ).toEqual([
      ['acct-0', 1, 1, 1],
      ['acct-1', 1, 2, 2],
      ['acct-0', 2, 3, 4],
      ['acct-1', 2, 4, 6],
      ['acct-0', 3, 5, 9],
    ]);
  });
});

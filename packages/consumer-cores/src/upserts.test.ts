import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ChangeMessageVisibilityBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import * as v from 'valibot';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEntryUpsertHandler } from './entry-upsert.js';
import { EventSchema, parseWith } from './event.js';
import { createFifoVersionedHandler } from './fifo-versioned.js';
import { createStateUpsertHandler } from './state-upsert.js';
import { batch, memoryLogger, record } from './test/records.js';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));

const Account = v.looseObject({
  ...EventSchema.entries,
  accountId: v.string(),
  seq: v.number(),
  amountCents: v.number(),
  balanceAfterCents: v.number(),
});
type AccountEvent = v.InferOutput<typeof Account>;
const event = (seq: number, eventId = `e-${seq}`) => ({
  eventId,
  accountId: 'a-1',
  seq,
  amountCents: 100,
  balanceAfterCents: 100 * seq,
});
const failedAt = (version: number) =>
  new ConditionalCheckFailedException({
    message: 'failed',
    $metadata: {},
    Item: { version: { N: String(version) } },
  });
const update = (index = 0) => ddb.commandCalls(UpdateCommand)[index]?.args[0].input;

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  ddb.on(UpdateCommand).resolves({});
});

describe('createEntryUpsertHandler', () => {
  const handler = (signals = {}) =>
    createEntryUpsertHandler<AccountEvent>({
      ddb: client,
      table: 'entries',
      parse: parseWith(Account),
      logger: memoryLogger(),
      entryOf: (e) => ({ accountId: e.accountId, amountCents: e.amountCents }),
      signals,
    });

  it('SETs one entry keyed on the event id, refusing only another payload under the same id', async () => {
    await handler()(batch(record(event(1))));

    expect(update()).toMatchObject({
      Key: { pk: 'ENTRY#e-1' },
      ConditionExpression: 'attribute_not_exists(#pk) OR #payloadHash = :payloadHash',
    });
    expect(update()?.UpdateExpression).not.toMatch(/ADD/);
  });

  it('signals a repeat when the entry was there, and fails a reused id', async () => {
    const repeats: string[] = [];
    ddb
      .on(UpdateCommand, { Key: { pk: 'ENTRY#e-1' } })
      .resolves({ Attributes: { pk: 'ENTRY#e-1', payloadHash: 'h' } });
    ddb.on(UpdateCommand, { Key: { pk: 'ENTRY#e-2' } }).rejects(failedAt(0));
    const reused = record(event(2));

    const response = await handler({ repeat: (e: { eventId: string }) => void repeats.push(e.eventId) })(
      batch(record(event(1)), reused),
    );

    expect(repeats).toEqual(['e-1']);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: reused.messageId }] });
  });
});

describe('createStateUpsertHandler', () => {
  const handler = (signals = {}) =>
    createStateUpsertHandler<AccountEvent>({
      ddb: client,
      table: 'accounts',
      parse: parseWith(Account),
      logger: memoryLogger(),
      stateKey: (e) => ({ pk: `ACCOUNT#${e.accountId}` }),
      versionOf: (e) => e.seq,
      stateOf: (e) => ({ balanceCents: e.balanceAfterCents }),
      signals,
    });

  it('SETs the state and version only over an older version', async () => {
    await handler()(batch(record(event(3))));

    expect(update()).toMatchObject({
      Key: { pk: 'ACCOUNT#a-1' },
      ConditionExpression: 'attribute_not_exists(#version) OR #version < :version',
      ExpressionAttributeValues: { ':s0': 300, ':version': 3 },
    });
  });

  it('acknowledges a superseded state and a repeat, telling them apart', async () => {
    const seen: string[] = [];
    ddb.on(UpdateCommand).rejectsOnce(failedAt(9)).rejectsOnce(failedAt(4));

    const response = await handler({
      superseded: (e: { eventId: string }, stored: number) => void seen.push(`${e.eventId} behind ${stored}`),
      repeat: (e: { eventId: string }) => void seen.push(`${e.eventId} again`),
    })(batch(record(event(3)), record(event(4))));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(seen).toEqual(['e-3 behind 9', 'e-4 again']);
  });
});

describe('createFifoVersionedHandler', () => {
  const handler = () =>
    createFifoVersionedHandler<AccountEvent>({
      ddb: client,
      table: 'accounts',
      sqs: new SQSClient({ region: 'eu-west-1' }),
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo',
      parse: parseWith(Account),
      logger: memoryLogger(),
      key: (e) => ({ pk: `ACCOUNT#${e.accountId}` }),
      seqOf: (e) => e.seq,
      deltasOf: (e) => ({ balanceCents: e.amountCents }),
    });

  it('adds the delta only when the account is one position behind, and the first only on no version', async () => {
    await handler()(batch(record(event(1), { group: 'a-1' }), record(event(2), { group: 'a-1' })));

    expect(update(0)?.ConditionExpression).toBe('attribute_not_exists(#version)');
    expect(update(1)).toMatchObject({
      ConditionExpression: '#version = :previous',
      ExpressionAttributeValues: { ':seq': 2, ':previous': 1, ':d0': 100 },
    });
  });

  it('skips a repeat; fails a gap and the rest of its group, and releases them at once', async () => {
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
    ddb.on(UpdateCommand).rejectsOnce(failedAt(5)).rejectsOnce(failedAt(5));
    const repeat = record(event(4), { group: 'a-1' });
    const gap = record(event(7), { group: 'a-1' });
    const behind = record(event(8), { group: 'a-1' });

    const response = await handler()(batch(repeat, gap, behind));

    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      gap.messageId,
      behind.messageId,
    ]);
    const released = sqs.commandCalls(ChangeMessageVisibilityBatchCommand)[0]?.args[0].input.Entries;
    expect(released?.map((entry) => [entry.ReceiptHandle, entry.VisibilityTimeout])).toEqual([
      [gap.receiptHandle, 0],
      [behind.receiptHandle, 0],
    ]);
  });

  it.each([0, -1, 1.5])(
    'fails a seq of %s before any write: a stream position is a whole number from 1',
    async (seq) => {
      const invalid = record(event(seq), { group: 'a-1' });

      const response = await handler()(batch(invalid));

      expect(response.batchItemFailures).toEqual([{ itemIdentifier: invalid.messageId }]);
      expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
    },
  );
});

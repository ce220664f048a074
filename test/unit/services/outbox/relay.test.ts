import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../../contract/errors.js';
import {
  INLINE_BODY_BYTES,
  type OutboxMessage,
  outboxItem,
  outboxMessageOf,
} from '../../../../services/outbox/outbox.js';

const QUEUES = vi.hoisted(() => {
  const queues = {
    'at-least-once': 'https://sqs.eu-west-1.amazonaws.com/123456789012/at-least-once',
    'fifo-versioned': 'https://sqs.eu-west-1.amazonaws.com/123456789012/fifo-versioned.fifo',
  };
  // The handler reads its configuration at module scope, as deployed.
  process.env.QUEUE_URLS = JSON.stringify(queues);
  return queues;
});

const { handler, readTargets, relayRecords } = await import('../../../../services/outbox/relay.js');

const STANDARD = { name: 'at-least-once', queueUrl: QUEUES['at-least-once'], fifo: false };
const FIFO = { name: 'fifo-versioned', queueUrl: QUEUES['fifo-versioned'], fifo: true };
const silent = { error: () => undefined, info: () => undefined };

let sequence = 100;

/** A stream record as Lambda hands it over for an outbox item (DynamoDB JSON NewImage). */
function streamRecord(
  overrides: Partial<OutboxMessage> = {},
  eventName: DynamoDBRecord['eventName'] = 'INSERT',
): DynamoDBRecord {
  sequence += 1;
  const message: OutboxMessage = {
    runId: 'run-1',
    eventId: `evt-${sequence}`,
    accountId: 'acct-1',
    position: sequence,
    body: JSON.stringify({ eventId: `evt-${sequence}` }),
    ...overrides,
  };
  return {
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      SequenceNumber: String(sequence).padStart(21, '0'),
      NewImage: {
        pk: { S: `RUN#${message.runId}#ACCOUNT#${message.accountId}` },
        sk: { S: `POS#${message.position}` },
        runId: { S: message.runId },
        eventId: { S: message.eventId },
        accountId: { S: message.accountId },
        position: { N: String(message.position) },
        body: { S: message.body },
      },
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

const sequenceOf = (record: DynamoDBRecord) => record.dynamodb?.SequenceNumber;

describe('the outbox relay (Lambda, DynamoDB stream → SQS)', () => {
  const sqs = mockClient(SQSClient);
  const deps = (targets = [STANDARD, FIFO]) => ({ sqs: new SQSClient({}), targets, logger: silent });

  beforeEach(() => {
    sqs.reset();
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  });

  it('publishes each insert to every queue, in stream order, and reports no failure', async () => {
    const records = [streamRecord(), streamRecord(), streamRecord()];

    const result = await relayRecords(records, deps());

    expect(result).toEqual({ batchItemFailures: [] });
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);
    expect(calls.map((input) => input.QueueUrl).sort()).toEqual([STANDARD.queueUrl, FIFO.queueUrl]);
    for (const input of calls) {
      expect(input.Entries?.map((entry) => entry.MessageBody)).toEqual(
        records.map((record) => record.dynamodb?.NewImage?.body?.S),
      );
    }
  });

  it('sends what the direct producer sends: run and event attributes; on FIFO, group = run:account and dedup id = run:event', async () => {
    const record = streamRecord({ runId: 'run-7', eventId: 'evt-42', accountId: 'acct-3' });

    await relayRecords([record], deps());

    const byQueue = new Map(
      sqs
        .commandCalls(SendMessageBatchCommand)
        .map((call) => [call.args[0].input.QueueUrl, call.args[0].input]),
    );
    const attributes = {
      runId: { DataType: 'String', StringValue: 'run-7' },
      eventId: { DataType: 'String', StringValue: 'evt-42' },
    };
    expect(byQueue.get(FIFO.queueUrl)?.Entries?.[0]).toMatchObject({
      MessageAttributes: attributes,
      // One group per run and account, as the harness's producer sends (fifoIdsOf).
      MessageGroupId: 'run-7:acct-3',
      MessageDeduplicationId: 'run-7:evt-42',
    });
    const standard = byQueue.get(STANDARD.queueUrl)?.Entries?.[0];
    expect(standard?.MessageAttributes).toEqual(attributes);
    expect(standard?.MessageGroupId).toBeUndefined();
    expect(standard?.MessageDeduplicationId).toBeUndefined();
  });

  it('relays nothing for updates and TTL deletions of outbox items', async () => {
    const result = await relayRecords([streamRecord({}, 'MODIFY'), streamRecord({}, 'REMOVE')], deps());

    expect(result).toEqual({ batchItemFailures: [] });
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('reports the first record of the batch that failed to send, so the mapping retries from it', async () => {
    const records = Array.from({ length: 15 }, () => streamRecord());
    // The second SendMessageBatch of the FIFO queue (records 10–14) fails.
    let fifoCalls = 0;
    sqs.on(SendMessageBatchCommand, { QueueUrl: FIFO.queueUrl }).callsFake(() => {
      fifoCalls += 1;
      if (fifoCalls === 2) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
      return { Successful: [], Failed: [] };
    });

    const result = await relayRecords(records, deps());

    expect(result).toEqual({
      batchItemFailures: [{ itemIdentifier: sequenceOf(records[10] as DynamoDBRecord) }],
    });
  });

  it('reports a batch whose entries SQS keeps refusing, from its first record', async () => {
    const records = [streamRecord(), streamRecord()];
    sqs.on(SendMessageBatchCommand, { QueueUrl: STANDARD.queueUrl }).callsFake((input) => ({
      Successful: [],
      Failed: [{ Id: input.Entries[0].Id, SenderFault: false, Code: 'InternalError', Message: 'try again' }],
    }));

    const result = await relayRecords(records, { ...deps(), sqs: new SQSClient({}) });

    expect(result).toEqual({
      batchItemFailures: [{ itemIdentifier: sequenceOf(records[0] as DynamoDBRecord) }],
    });
  });

  it('stops at a malformed outbox item: those before it are published, it is reported, those after it wait', async () => {
    const before = streamRecord();
    const malformed = streamRecord();
    delete malformed.dynamodb?.NewImage?.eventId;
    const after = streamRecord();

    const result = await relayRecords([before, malformed, after], deps([STANDARD]));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceOf(malformed) }] });
    const [call] = sqs.commandCalls(SendMessageBatchCommand);
    expect(call?.args[0].input.Entries?.map((entry) => entry.MessageBody)).toEqual([
      before.dynamodb?.NewImage?.body?.S,
    ]);
  });

  it('the handler publishes to the queues named in QUEUE_URLS', async () => {
    const result = await handler({ Records: [streamRecord()] });

    expect(result).toEqual({ batchItemFailures: [] });
    expect(
      sqs
        .commandCalls(SendMessageBatchCommand)
        .map((call) => call.args[0].input.QueueUrl)
        .sort(),
    ).toEqual([STANDARD.queueUrl, FIFO.queueUrl]);
  });
});

describe('the outbox item', () => {
  const message: OutboxMessage = {
    runId: 'run-1',
    eventId: 'evt-000007',
    accountId: 'acct-2',
    position: 7,
    // A poison body near SQS's 1 MiB limit: more than a DynamoDB item may hold, uncompressed.
    body: JSON.stringify({ eventId: 'evt-000007', padding: 'x'.repeat(1_000_000) }),
  };

  it('stores a body over the inline limit gzip-compressed, and the relay reads it back as Lambda and the Streams API carry it', () => {
    const item = outboxItem(message);
    expect(item.body).toBeUndefined();
    const compressed = item.bodyGzip as Uint8Array;
    expect(compressed.byteLength).toBeLessThan(INLINE_BODY_BYTES);
    const image = (bytes: string | Uint8Array) => ({
      runId: { S: message.runId },
      eventId: { S: message.eventId },
      accountId: { S: message.accountId },
      position: { N: String(message.position) },
      bodyGzip: { B: bytes },
    });
    // Lambda's DynamoDBStreamEvent: base64; the Streams API client: bytes.
    expect(outboxMessageOf(image(Buffer.from(compressed).toString('base64')))).toEqual(message);
    expect(outboxMessageOf(image(compressed))).toEqual(message);
  });

  it('keeps an ordinary body inline, keyed by run and account, sorted by position', () => {
    const item = outboxItem({ ...message, body: '{"eventId":"evt-000007"}' });
    expect(item).toMatchObject({
      pk: 'RUN#run-1#ACCOUNT#acct-2',
      sk: 'POS#0000000007',
      body: '{"eventId":"evt-000007"}',
      position: 7,
    });
    expect(item.bodyGzip).toBeUndefined();
  });
});

describe('the outbox relay configuration', () => {
  it('reads QUEUE_URLS as mode → queue URL, FIFO from the topology', () => {
    expect(readTargets({ QUEUE_URLS: JSON.stringify(QUEUES) })).toEqual([STANDARD, FIFO]);
  });

  it.each([
    ['missing', undefined],
    ['not JSON', 'at-least-once=https://x'],
    ['empty', '{}'],
    ['an unknown mode', JSON.stringify({ 'exactly-once': 'https://x' })],
    ['a FIFO mode on a standard queue', JSON.stringify({ 'fifo-versioned': 'https://x/q' })],
    ['a standard mode on a FIFO queue', JSON.stringify({ 'at-least-once': 'https://x/q.fifo' })],
  ])('refuses QUEUE_URLS that is %s', (_, value) => {
    expect(() => readTargets({ QUEUE_URLS: value })).toThrow(ConfigError);
  });
});

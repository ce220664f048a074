import { randomUUID } from 'node:crypto';
import { DescribeTableCommand, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Mode } from '../../contract/topology.js';
import { type RunningEmulators, startEmulators } from '../../harness/local-aws/emulators/index.js';
import { producerCrashes } from '../../harness/run/outbox/crash-draws.js';
import {
  type OutboxEnvironment,
  OutboxNotSupportedError,
  produceThrough,
  serviceEvents,
} from '../../harness/run/outbox/produce-through.js';
import { OUTBOX_TABLES } from '../../harness/run/outbox/tables.js';
import { buildManifest } from '../../harness/run/producer.js';
import type { Manifest } from '../../verifier/manifest.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

const STANDARD: Mode = 'at-least-once';
const FIFO: Mode = 'fifo-versioned';
const MESSAGES = 120;
const CRASH_RATE = 0.05;
/** Per relay publish (a chunk): the relay publishes a few dozen chunks, so this kills it a few times. */
const RELAY_CRASH_RATE = 0.2;
const SEED = 'outbox-test';

const config = (endpoint: string) => ({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

/** The component files' DynamoDB Local, with this file's own tables (the producer's defaults, prefixed). */
const shared = await sharedDynamoDb('outbox');
const TABLES = {
  state: `${shared.tablePrefix}${OUTBOX_TABLES.state}`,
  outbox: `${shared.tablePrefix}${OUTBOX_TABLES.outbox}`,
};
let emulators: RunningEmulators;
let sqs: SQSClient;
let dynamodb: DynamoDBClient;
let ddb: DynamoDBDocumentClient;

beforeAll(async () => {
  emulators = await startEmulators(shared);
  sqs = new SQSClient(config(emulators.sqsEndpoint));
  dynamodb = new DynamoDBClient(config(emulators.dynamodbEndpoint));
  ddb = DynamoDBDocumentClient.from(dynamodb);
});

afterAll(async () => {
  sqs?.destroy();
  dynamodb?.destroy();
  await emulators?.stop();
});

/** Fresh queues per test: a standard one and a FIFO one, as the embedded environment makes them. */
async function environment(): Promise<OutboxEnvironment> {
  const name = `outbox-${randomUUID().slice(0, 8)}`;
  const standard = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  const fifo = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}.fifo`,
      Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'false' },
    }),
  );
  const urls: Partial<Record<Mode, string | undefined>> = {
    [STANDARD]: standard.QueueUrl,
    [FIFO]: fifo.QueueUrl,
  };
  return {
    description: { target: 'embedded', crashRate: 0, crashSeed: SEED, modes: {} as never },
    sqs,
    ddb,
    queueUrl: (mode) => {
      const url = urls[mode];
      if (url === undefined) throw new Error(`no queue for ${mode}`);
      return url;
    },
  };
}

/** Every message in the queue, in receive order (a FIFO queue: group order), deleted as read. */
async function drain(queueUrl: string): Promise<Message[]> {
  const all: Message[] = [];
  for (let empty = 0; empty < 2; ) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId', 'MessageDeduplicationId'],
      }),
    );
    if (Messages.length === 0) {
      empty += 1;
      continue;
    }
    empty = 0;
    all.push(...Messages);
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle ?? '',
        })),
      }),
    );
  }
  return all;
}

const eventIdOf = (message: Message) => message.MessageAttributes?.eventId?.StringValue ?? '?';

function counts(ids: readonly string[]): Map<string, number> {
  const result = new Map<string, number>();
  for (const id of ids) result.set(id, (result.get(id) ?? 0) + 1);
  return result;
}

/** The events the seed kills the producer at (between commit and send), drawn as the producer draws. */
function killedEvents(manifest: Manifest): string[] {
  return serviceEvents(manifest)
    .filter((event) => producerCrashes(CRASH_RATE, SEED, event.eventId, event.occurrence))
    .map((event) => event.eventId);
}

/** Per account, the seq of its events in the order the FIFO queue delivered them: must be increasing. */
function outOfOrderAccounts(messages: readonly Message[]): string[] {
  const last = new Map<string, number>();
  const broken = new Set<string>();
  for (const message of messages) {
    const body = JSON.parse(message.Body ?? '{}') as { accountId: string; seq: number };
    if ((last.get(body.accountId) ?? 0) >= body.seq) broken.add(body.accountId);
    last.set(body.accountId, body.seq);
  }
  return [...broken];
}

async function pendingCentsOf(runId: string): Promise<number> {
  const { Items = [] } = await dynamodb.send(
    new ScanCommand({
      TableName: TABLES.state,
      FilterExpression: 'begins_with(pk, :run) AND sk = :pending',
      ExpressionAttributeValues: { ':run': { S: `RUN#${runId}#ACCOUNT#` }, ':pending': { S: 'PENDING' } },
    }),
  );
  return Items.reduce((sum, item) => sum + Number(item.pendingCents?.N ?? 0), 0);
}

/** Every record of the outbox table's stream, in the shape Lambda's DynamoDBStreamEvent gives them. */
async function streamRecords(): Promise<DynamoDBRecord[]> {
  const streams = new DynamoDBStreamsClient(config(emulators.dynamodbEndpoint));
  try {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: TABLES.outbox }));
    const StreamArn = Table?.LatestStreamArn;
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn }));
    const records: DynamoDBRecord[] = [];
    for (const shard of StreamDescription?.Shards ?? []) {
      let { ShardIterator } = await streams.send(
        new GetShardIteratorCommand({ StreamArn, ShardId: shard.ShardId, ShardIteratorType: 'TRIM_HORIZON' }),
      );
      while (ShardIterator) {
        const page = await streams.send(new GetRecordsCommand({ ShardIterator }));
        if ((page.Records ?? []).length === 0) break;
        // The Streams API's record is Lambda's, but for dates and binary values (none in these items).
        records.push(...(JSON.parse(JSON.stringify(page.Records)) as DynamoDBRecord[]));
        ShardIterator = page.NextShardIterator;
      }
    }
    return records;
  } finally {
    streams.destroy();
  }
}

const expectedCents = (manifest: Manifest) =>
  manifest.events.reduce((sum, event) => sum + event.amountCents, 0);

describe('the producing side under real SIGKILLs', () => {
  it('dual write: a kill between the commit and the send loses exactly the events it committed, in every mode', async () => {
    const env = await environment();
    const manifest = buildManifest(`dual-${randomUUID().slice(0, 8)}`, SEED, MESSAGES, 20);
    const killed = killedEvents(manifest);
    expect(killed.length, 'the seed kills the producer at least once').toBeGreaterThan(2);

    const sent: Partial<Record<Mode, number>> = {};
    const stats = await produceThrough('dual-write', env, [STANDARD, FIFO], manifest, {
      seed: SEED,
      tables: TABLES,
      producerCrashRate: CRASH_RATE,
      relayCrashRate: CRASH_RATE,
      onSent: (mode, count) => {
        sent[mode] = (sent[mode] ?? 0) + count;
      },
    });

    expect(stats).toMatchObject({
      kind: 'dual-write',
      committed: MESSAGES,
      producerCrashes: killed.length,
      relayCrashes: 0,
      sentTwice: [],
    });
    expect(stats.neverSent).toEqual(killed);
    const delivered = MESSAGES - killed.length;
    expect(stats.published).toEqual({ [STANDARD]: delivered, [FIFO]: delivered });
    expect(sent).toEqual(stats.published);
    // Every commit happened: the service's state counts the money its events never announced.
    expect(await pendingCentsOf(manifest.runId)).toBe(expectedCents(manifest));

    for (const mode of [STANDARD, FIFO]) {
      const messages = await drain(env.queueUrl(mode));
      const received = counts(messages.map(eventIdOf));
      const expected = manifest.messages.map((m) => m.eventId).filter((id) => !killed.includes(id));
      expect([...received.keys()].sort(), mode).toEqual([...new Set(expected)].sort());
      expect(
        [...received.values()].every((n) => n === 1),
        mode,
      ).toBe(true);
      if (mode === FIFO) {
        expect(outOfOrderAccounts(messages)).toEqual([]);
        expect(messages[0]?.Attributes?.MessageGroupId).toBe(
          `${manifest.runId}:${JSON.parse(messages[0]?.Body ?? '{}').accountId}`,
        );
        expect(messages[0]?.Attributes?.MessageDeduplicationId).toBe(
          `${manifest.runId}:${eventIdOf(messages[0] as Message)}`,
        );
      }
    }
  });

  it('outbox: producer and relay kills lose nothing; the relay sends what followed its checkpoint again', async () => {
    const env = await environment();
    const manifest = buildManifest(`outbox-${randomUUID().slice(0, 8)}`, SEED, MESSAGES, 20);
    const killed = killedEvents(manifest);

    const stats = await produceThrough('outbox', env, [STANDARD, FIFO], manifest, {
      seed: SEED,
      tables: TABLES,
      producerCrashRate: CRASH_RATE,
      relayCrashRate: RELAY_CRASH_RATE,
    });

    expect(stats).toMatchObject({ kind: 'outbox', committed: MESSAGES, neverSent: [] });
    // The same events kill the producer as in the dual write: after the commit, which now holds the event.
    expect(stats.producerCrashes).toBe(killed.length);
    expect(stats.relayCrashes).toBeGreaterThan(0);
    expect(stats.sentTwice.length).toBeGreaterThan(0);
    expect(await pendingCentsOf(manifest.runId)).toBe(expectedCents(manifest));
    const { Count } = await ddb.send(
      new QueryCommand({
        TableName: TABLES.outbox,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `RUN#${manifest.runId}#ACCOUNT#acct-00` },
        Select: 'COUNT',
      }),
    );
    expect(Count).toBe(manifest.messages.filter((m) => m.accountId === 'acct-00').length);

    const all = [...new Set(manifest.messages.map((m) => m.eventId))].sort();
    const standard = counts((await drain(env.queueUrl(STANDARD))).map(eventIdOf));
    expect([...standard.keys()].sort()).toEqual(all);
    const twice = [...standard].filter(([, n]) => n > 1).map(([id]) => id);
    expect(twice.length).toBeGreaterThan(0);
    expect(twice.every((id) => stats.sentTwice.includes(id))).toBe(true);
    expect(stats.published[STANDARD]).toBe([...standard.values()].reduce((a, b) => a + b, 0));

    // The relay's re-sends carry the event's deduplication id: the FIFO queue delivers each once, in order.
    const fifo = await drain(env.queueUrl(FIFO));
    expect(fifo.map(eventIdOf).sort()).toEqual(all);
    expect(outOfOrderAccounts(fifo)).toEqual([]);
    expect(stats.published[FIFO]).toBe(stats.published[STANDARD]);
  });

  it('the Lambda relay publishes the records DynamoDB Local streams from the producer’s transactions, in order per account', async () => {
    const env = await environment();
    const manifest = buildManifest(`lambda-${randomUUID().slice(0, 8)}`, SEED, 30, 5);
    // Commits through the outbox with no relay crash; then replays the stream's records, as Lambda hands them over.
    await produceThrough('outbox', env, [STANDARD], manifest, {
      seed: SEED,
      tables: TABLES,
      producerCrashRate: 0,
      relayCrashRate: 0,
    });
    await drain(env.queueUrl(STANDARD));
    const records = (await streamRecords()).filter(
      (record) => record.dynamodb?.NewImage?.runId?.S === manifest.runId,
    );
    expect(records).toHaveLength(30);

    // The handler's module reads QUEUE_URLS when it loads (a bad deploy fails at cold start).
    vi.stubEnv(
      'QUEUE_URLS',
      JSON.stringify({ [STANDARD]: env.queueUrl(STANDARD), [FIFO]: env.queueUrl(FIFO) }),
    );
    const { relayRecords, readTargets } = await import('../../services/outbox/relay.js').finally(() =>
      vi.unstubAllEnvs(),
    );
    const result = await relayRecords(records, {
      sqs,
      targets: readTargets({ QUEUE_URLS: JSON.stringify({ [FIFO]: env.queueUrl(FIFO) }) }),
      logger: { error: () => undefined, info: () => undefined },
    });

    expect(result).toEqual({ batchItemFailures: [] });
    const fifo = await drain(env.queueUrl(FIFO));
    // Each event once, each account in order (a FIFO queue interleaves its groups as it likes).
    expect(fifo).toHaveLength(30);
    expect(new Set(fifo.map(eventIdOf))).toEqual(new Set(manifest.messages.map((m) => m.eventId)));
    expect(outOfOrderAccounts(fifo)).toEqual([]);
  });

  it('refuses a relay crash rate of 1: a relay that dies after every publish never checkpoints', async () => {
    const env = await environment();
    const manifest = buildManifest('rates', SEED, 1, 1);
    await expect(
      produceThrough('outbox', env, [STANDARD], manifest, {
        seed: SEED,
        tables: TABLES,
        producerCrashRate: 0,
        relayCrashRate: 1,
      }),
    ).rejects.toThrow(/relayCrashRate must be at least 0 and below 1/);
  });

  it('refuses an environment without local endpoints, saying why', async () => {
    const env = await environment();
    const manifest = buildManifest('deployed', SEED, 1, 1);
    await expect(
      produceThrough(
        'outbox',
        { ...env, description: { ...env.description, target: 'aws' } },
        [STANDARD],
        manifest,
        { seed: SEED, tables: TABLES, producerCrashRate: 0, relayCrashRate: 0 },
      ),
    ).rejects.toThrow(OutboxNotSupportedError);
  });
});

import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  LocalStreamMapping,
  type StreamInvocationRecord,
  type StreamMappingOptions,
} from '../../../../../harness/environments/assembly/stream-mapping.js';
import type { InvocationResult } from '../../../../../harness/local-aws/lambda-runtime/execution-environment.js';
import type { LocalFunction } from '../../../../../harness/local-aws/lambda-runtime/local-function.js';

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
const STREAM_ARN = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/DeliverySemantics-Outbox01C0C3BC-X/stream/2026-01-01T00:00:00.000`;
/** Creation time of the fake records: epoch seconds. */
const CREATED_S = 1_767_225_600;

/** 21-digit sequence numbers, as DynamoDB's: ordered as numbers, not as short strings. */
const seq = (n: number) => String(10n ** 20n + BigInt(n));
const indexOf = (sequenceNumber: string | undefined) => Number(BigInt(sequenceNumber ?? '0') - 10n ** 20n);

function record(
  n: number,
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE' = 'INSERT',
  runId = 'run-1',
  createdS = CREATED_S,
): StreamRecord {
  return {
    eventID: `event-${n}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'ddblocal',
    dynamodb: {
      ApproximateCreationDateTime: new Date(createdS * 1000),
      Keys: { pk: { S: `outbox#${runId}` }, sk: { S: String(n).padStart(6, '0') } },
      NewImage: {
        pk: { S: `outbox#${runId}` },
        sk: { S: String(n).padStart(6, '0') },
        runId: { S: runId },
        payload: { B: new Uint8Array([n, 1, 2]) },
        attempts: { L: [{ N: String(n) }, { M: { ok: { BOOL: true } } }] },
      },
      SequenceNumber: seq(n),
      SizeBytes: 64,
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

interface FakeShard {
  readonly id: string;
  readonly parent?: string;
  readonly records: StreamRecord[];
  closed: boolean;
}

/**
 * DynamoDB Streams behind aws-sdk-client-mock: shards of records, iterators that are positions,
 * GetRecords pages of at most `pageSize` records; a closed shard read to its end has no next iterator.
 */
class FakeStream {
  readonly client = new DynamoDBStreamsClient({
    region: REGION,
    credentials: { accessKeyId: 'poller', secretAccessKey: 'poller' },
  });
  readonly mock = mockClient(this.client);
  readonly shards: FakeShard[] = [];
  getRecordsCalls = 0;

  constructor(readonly pageSize = 1000) {
    this.mock.on(DescribeStreamCommand).callsFake(() => ({
      StreamDescription: {
        StreamArn: STREAM_ARN,
        Shards: this.shards.map((shard) => ({
          ShardId: shard.id,
          ...(shard.parent ? { ParentShardId: shard.parent } : {}),
        })),
      },
    }));
    this.mock.on(GetShardIteratorCommand).callsFake((input) => {
      const shard = this.shard(input.ShardId);
      const position =
        input.ShardIteratorType === 'TRIM_HORIZON'
          ? 0
          : input.ShardIteratorType === 'LATEST'
            ? shard.records.length
            : shard.records.findIndex((r) => r.dynamodb?.SequenceNumber === input.SequenceNumber) +
              (input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER' ? 1 : 0);
      return { ShardIterator: `${shard.id}|${position}` };
    });
    this.mock.on(GetRecordsCommand).callsFake((input) => {
      this.getRecordsCalls += 1;
      const [id, at] = String(input.ShardIterator).split('|');
      const shard = this.shard(id);
      const from = Number(at);
      const page = shard.records.slice(from, from + Math.min(this.pageSize, input.Limit ?? 1000));
      const next = from + page.length;
      return {
        Records: page,
        ...(shard.closed && next >= shard.records.length ? {} : { NextShardIterator: `${shard.id}|${next}` }),
      };
    });
  }

  addShard(id: string, records: StreamRecord[], options: { parent?: string; closed?: boolean } = {}) {
    const shard: FakeShard = {
      id,
      records,
      closed: options.closed ?? false,
      ...(options.parent ? { parent: options.parent } : {}),
    };
    this.shards.push(shard);
    return shard;
  }

  private shard(id: string | undefined): FakeShard {
    const shard = this.shards.find((candidate) => candidate.id === id);
    if (!shard) throw new Error(`no shard ${id}`);
    return shard;
  }
}

/** The function: records each event's sequence numbers (as indexes) and answers what `answer` says. */
function fakeFunction(
  answer: (indexes: number[], call: number) => InvocationResult | Promise<InvocationResult>,
) {
  const calls: number[][] = [];
  const events: DynamoDBStreamEvent[] = [];
  const fn: Pick<LocalFunction, 'invoke'> = {
    invoke: async (event) => {
      const streamEvent = event as DynamoDBStreamEvent;
      events.push(streamEvent);
      const indexes = streamEvent.Records.map((r) => indexOf(r.dynamodb?.SequenceNumber));
      calls.push(indexes);
      return answer(indexes, calls.length);
    },
  };
  return { fn, calls, events };
}

const ok = (response: unknown = null): InvocationResult => ({ status: 'ok', response, maxRssKb: 0 });
const error = (): InvocationResult => ({ status: 'error', errorType: 'Handler', message: 'boom' });
const failAt = (...indexes: number[]) =>
  ok({ batchItemFailures: indexes.map((n) => ({ itemIdentifier: seq(n) })) });

const running: LocalStreamMapping[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((mapping) => mapping.stop()));
});

function startMapping(
  stream: FakeStream,
  fn: Pick<LocalFunction, 'invoke'>,
  overrides: Partial<StreamMappingOptions> = {},
) {
  const failures: { records: unknown[]; reason: string; invocationRecord: StreamInvocationRecord }[] = [];
  const fatal: Error[] = [];
  const mapping = new LocalStreamMapping({
    streams: stream.client,
    streamArn: STREAM_ARN,
    fn,
    batchSize: 100,
    maxBatchingWindowMs: 0,
    startingPosition: 'TRIM_HORIZON',
    filterPatterns: [],
    reportBatchItemFailures: true,
    bisectOnError: false,
    maximumRetryAttempts: 3,
    maximumRecordAgeSeconds: -1,
    onFailure: async (records, reason, invocationRecord) => {
      failures.push({ records, reason, invocationRecord });
    },
    region: REGION,
    accountId: ACCOUNT,
    onFatal: (e) => fatal.push(e),
    pollIntervalMs: 5,
    now: () => (CREATED_S + 10) * 1000,
    ...overrides,
  });
  running.push(mapping);
  mapping.start();
  return { mapping, failures, fatal };
}

const until = (check: () => void) => vi.waitFor(check, { timeout: 3_000, interval: 5 });
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('LocalStreamMapping: order and the event Lambda sends', () => {
  it('delivers each shard in order, batch by batch, across GetRecords pages', async () => {
    const stream = new FakeStream(3);
    stream.addShard(
      'shard-1',
      range(0, 7).map((n) => record(n)),
    );
    const { fn, calls } = fakeFunction(() => ok());
    const { mapping } = startMapping(stream, fn, { batchSize: 2 });

    await until(() => expect(mapping.stats.records).toBe(7));
    expect(calls).toEqual([[0, 1], [2, 3], [4, 5], [6]]);
    expect(mapping.stats).toMatchObject({ invocations: 4, records: 7, failedBatches: 0, sentToOnFailure: 0 });
  });

  it('reads a child shard only after its parent is read to its end', async () => {
    const stream = new FakeStream(2);
    // Listed child first: the order of DescribeStream is not the order of reading.
    stream.addShard('child', [record(5), record(6)], { parent: 'parent' });
    stream.addShard(
      'parent',
      range(0, 5).map((n) => record(n)),
      { closed: true },
    );
    const { fn, calls } = fakeFunction(() => ok());
    const { mapping } = startMapping(stream, fn, { batchSize: 10 });

    await until(() => expect(mapping.stats.records).toBe(7));
    expect(calls.flat()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('sends the DynamoDB stream event shape: epoch-second times, base64 binaries, the stream ARN', async () => {
    const stream = new FakeStream();
    stream.addShard('shard-1', [
      record(1),
      { ...record(2, 'REMOVE'), userIdentity: { Type: 'Service', PrincipalId: 'dynamodb.amazonaws.com' } },
    ]);
    const { fn, events } = fakeFunction(() => ok());
    const { mapping } = startMapping(stream, fn);

    await until(() => expect(mapping.stats.records).toBe(2));
    expect(events).toHaveLength(1);
    expect(events[0]?.Records[0]).toStrictEqual({
      eventID: 'event-1',
      eventName: 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: REGION,
      dynamodb: {
        ApproximateCreationDateTime: CREATED_S,
        Keys: { pk: { S: 'outbox#run-1' }, sk: { S: '000001' } },
        NewImage: {
          pk: { S: 'outbox#run-1' },
          sk: { S: '000001' },
          runId: { S: 'run-1' },
          payload: { B: Buffer.from([1, 1, 2]).toString('base64') },
          attempts: { L: [{ N: '1' }, { M: { ok: { BOOL: true } } }] },
        },
        SequenceNumber: seq(1),
        SizeBytes: 64,
        StreamViewType: 'NEW_IMAGE',
      },
      eventSourceARN: STREAM_ARN,
    });
    expect(events[0]?.Records[1]?.userIdentity).toEqual({
      type: 'Service',
      principalId: 'dynamodb.amazonaws.com',
    });
    // What the function receives is JSON: nothing in it is lost on the way.
    expect(JSON.parse(JSON.stringify(events[0]))).toStrictEqual(events[0]);
  });
});

describe('LocalStreamMapping: eventSourceArn', () => {
  it('reads streamArn, and names eventSourceArn in the events and the invocation record', async () => {
    // The local runtime reads DynamoDB Local's stream; the function sees the template's StreamArn.
    const localArn = `arn:aws:dynamodb:ddblocal:${ACCOUNT}:table/Outbox/stream/2026-01-01T00:00:00.000`;
    const stream = new FakeStream();
    stream.addShard('shard-1', [record(0), record(1)]);
    const { fn, events } = fakeFunction((indexes) => (indexes.includes(0) ? error() : ok()));
    const { mapping, failures } = startMapping(stream, fn, {
      streamArn: localArn,
      eventSourceArn: STREAM_ARN,
      batchSize: 1,
      maximumRetryAttempts: 0,
    });

    await until(() => expect(mapping.stats.records).toBe(2));
    expect(events.flatMap((event) => event.Records.map((r) => r.eventSourceARN))).toEqual([
      STREAM_ARN,
      STREAM_ARN,
    ]);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.invocationRecord.DDBStreamBatchInfo.streamArn).toBe(STREAM_ARN);
    const read = [
      ...stream.mock.commandCalls(DescribeStreamCommand),
      ...stream.mock.commandCalls(GetShardIteratorCommand),
    ].map((call) => call.args[0].input.StreamArn);
    expect(read.length).toBeGreaterThanOrEqual(2);
    expect(new Set(read)).toEqual(new Set([localArn]));
  });
});

describe('LocalStreamMapping: filters', () => {
  it('skips records no filter matches, and counts them as processed', async () => {
    const stream = new FakeStream();
    stream.addShard('shard-1', [
      record(0, 'INSERT'),
      record(1, 'MODIFY'),
      record(2, 'INSERT'),
      record(3, 'REMOVE'),
      record(4, 'INSERT'),
    ]);
    const { fn, calls } = fakeFunction(() => ok());
    const { mapping } = startMapping(stream, fn, { filterPatterns: ['{"eventName":["INSERT"]}'] });

    await until(() => expect(mapping.stats.records).toBe(5));
    expect(calls).toEqual([[0, 2, 4]]);
    expect(mapping.stats).toMatchObject({ filtered: 2, deliveries: 3 });
  });

  it('matches nested keys, ORs the patterns, and never invokes for a batch filtered away', async () => {
    const stream = new FakeStream(2);
    stream.addShard('shard-1', [
      record(0, 'INSERT', 'other'),
      record(1, 'INSERT', 'other'),
      record(2, 'INSERT', 'run-1'),
      record(3, 'MODIFY', 'other'),
      record(4, 'REMOVE', 'run-2'),
    ]);
    const { fn, calls } = fakeFunction(() => ok());
    const { mapping } = startMapping(stream, fn, {
      batchSize: 2,
      filterPatterns: [
        '{"dynamodb":{"NewImage":{"runId":{"S":["run-1"]}}}}',
        '{"eventName":["REMOVE"],"dynamodb":{"Keys":{"pk":{"S":["outbox#run-2"]}}}}',
      ],
    });

    await until(() => expect(mapping.stats.records).toBe(5));
    // Records 0 and 1 (one page) are filtered away whole: no invocation for them.
    expect(calls).toEqual([[2], [4]]);
  });

  it.each([
    ['prefix', '{"eventName":[{"prefix":"IN"}]}'],
    ['anything-but', '{"eventName":[{"anything-but":["REMOVE"]}]}'],
    ['numeric', '{"dynamodb":{"SizeBytes":[{"numeric":[">",10]}]}}'],
    ['exists', '{"dynamodb":{"NewImage":{"runId":[{"exists":true}]}}}'],
  ])('refuses the %s operator at construction, in one line', (operator, pattern) => {
    const stream = new FakeStream();
    const { fn } = fakeFunction(() => ok());
    const create = () =>
      new LocalStreamMapping({
        streams: stream.client,
        streamArn: STREAM_ARN,
        fn,
        batchSize: 100,
        maxBatchingWindowMs: 0,
        startingPosition: 'TRIM_HORIZON',
        filterPatterns: [pattern],
        reportBatchItemFailures: true,
        bisectOnError: true,
        maximumRetryAttempts: 3,
        maximumRecordAgeSeconds: 3600,
        region: REGION,
        accountId: ACCOUNT,
        onFatal: () => undefined,
      });
    expect(create).toThrow(RangeError);
    expect(create).toThrow(`"${operator}" operator`);
    expect(() => create()).toThrow(/^[^\n]+$/);
  });
});

describe('LocalStreamMapping: errors', () => {
  it('retries a partial failure from the lowest failed sequence number, never past it', async () => {
    const stream = new FakeStream();
    stream.addShard(
      'shard-1',
      range(0, 6).map((n) => record(n)),
    );
    const { fn, calls } = fakeFunction((_indexes, call) =>
      // The first answer names 4 and 2 (not in order): Lambda resumes at the lowest, 2.
      call === 1 ? failAt(4, 2) : call === 2 ? failAt(3) : ok(),
    );
    const { mapping } = startMapping(stream, fn, { batchSize: 6 });

    await until(() => expect(mapping.stats.records).toBe(6));
    expect(calls).toEqual([
      [0, 1, 2, 3, 4, 5],
      [2, 3, 4, 5],
      [3, 4, 5],
    ]);
    expect(mapping.stats).toMatchObject({ invocations: 3, failedBatches: 2, sentToOnFailure: 0 });
  });

  it('ignores batchItemFailures without ReportBatchItemFailures, and fails the batch on an unknown identifier', async () => {
    const stream = new FakeStream();
    stream.addShard(
      'shard-1',
      range(0, 3).map((n) => record(n)),
    );
    const off = fakeFunction(() => failAt(1));
    const first = startMapping(stream, off.fn, { reportBatchItemFailures: false });
    await until(() => expect(first.mapping.stats.records).toBe(3));
    expect(off.calls).toEqual([[0, 1, 2]]);

    const unknown = fakeFunction((_, call) =>
      call === 1 ? ok({ batchItemFailures: [{ itemIdentifier: 'nope' }] }) : ok(),
    );
    const second = startMapping(stream, unknown.fn);
    await until(() => expect(second.mapping.stats.records).toBe(3));
    expect(unknown.calls).toEqual([
      [0, 1, 2],
      [0, 1, 2],
    ]);
  });

  it('does not move past a failing batch: the records after it wait until it succeeds', async () => {
    const stream = new FakeStream();
    stream.addShard(
      'shard-1',
      range(0, 4).map((n) => record(n)),
    );
    const { fn, calls } = fakeFunction((_, call) => (call <= 2 ? error() : ok()));
    const { mapping } = startMapping(stream, fn, { batchSize: 2 });

    await until(() => expect(mapping.stats.records).toBe(4));
    expect(calls).toEqual([
      [0, 1],
      [0, 1],
      [0, 1],
      [2, 3],
    ]);
  });

  it('bisects a failed batch until the bad record is alone, retries it, discards it, then moves on', async () => {
    const stream = new FakeStream();
    stream.addShard(
      'shard-1',
      range(0, 5).map((n) => record(n)),
    );
    const { fn, calls } = fakeFunction((indexes) => (indexes.includes(2) ? error() : ok()));
    const { mapping, failures } = startMapping(stream, fn, {
      batchSize: 4,
      bisectOnError: true,
      reportBatchItemFailures: false,
      maximumRetryAttempts: 1,
    });

    await until(() => expect(mapping.stats.records).toBe(5));
    expect(calls).toEqual([
      [0, 1, 2, 3], // fails: split (not a retry)
      [0, 1], // ok
      [2, 3], // fails: split
      [2], // fails alone: retry 1
      [2], // fails: retries exhausted → on-failure
      [3],
      [4],
    ]);
    expect(
      failures.map((f) => f.records.map((r) => indexOf((r as StreamRecord).dynamodb?.SequenceNumber))),
    ).toEqual([[2]]);
    expect(failures[0]?.invocationRecord.requestContext.approximateInvokeCount).toBe(4);
  });

  it('after MaximumRetryAttempts retries sends the batch to on-failure once, with the records and the invocation record', async () => {
    const stream = new FakeStream();
    stream.addShard(
      'shard-1',
      range(0, 4).map((n) => record(n)),
    );
    const { fn, calls, events } = fakeFunction((indexes) => (indexes.includes(0) ? error() : ok()));
    const { mapping, failures } = startMapping(stream, fn, { batchSize: 2, maximumRetryAttempts: 2 });

    await until(() => expect(mapping.stats.records).toBe(4));
    // The first invocation and 2 retries, then the shard moves on.
    expect(calls).toEqual([
      [0, 1],
      [0, 1],
      [0, 1],
      [2, 3],
    ]);
    expect(failures).toHaveLength(1);
    const [failure] = failures;
    expect(failure?.reason).toBe('RetryAttemptsExhausted');
    expect(failure?.records).toStrictEqual(events[0]?.Records);
    expect(failure?.invocationRecord).toMatchObject({
      requestContext: {
        functionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:local-function`,
        condition: 'RetryAttemptsExhausted',
        approximateInvokeCount: 3,
      },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      version: '1.0',
      DDBStreamBatchInfo: {
        shardId: 'shard-1',
        startSequenceNumber: seq(0),
        endSequenceNumber: seq(1),
        approximateArrivalOfFirstRecord: new Date(CREATED_S * 1000).toISOString().replace('.000Z', 'Z'),
        batchSize: 2,
        streamArn: STREAM_ARN,
      },
    });
    expect(mapping.stats).toMatchObject({ invocations: 4, failedBatches: 3, sentToOnFailure: 2, records: 4 });
  });

  it('sends to on-failure only the failing suffix a partial failure left', async () => {
    const stream = new FakeStream();
    stream.addShard(
      'shard-1',
      range(0, 4).map((n) => record(n)),
    );
    const { fn, calls } = fakeFunction(() => failAt(2));
    const { failures, mapping } = startMapping(stream, fn, { maximumRetryAttempts: 1 });

    await until(() => expect(failures).toHaveLength(1));
    expect(calls).toEqual([
      [0, 1, 2, 3],
      [2, 3],
    ]);
    expect(failures[0]?.invocationRecord.DDBStreamBatchInfo).toMatchObject({
      startSequenceNumber: seq(2),
      endSequenceNumber: seq(3),
      batchSize: 2,
    });
    await until(() => expect(mapping.stats.records).toBe(4));
  });

  it('discards records older than MaximumRecordAgeInSeconds without sending them', async () => {
    const stream = new FakeStream();
    const now = CREATED_S + 4000;
    stream.addShard('shard-1', [
      record(0, 'INSERT', 'run-1', now - 3700),
      record(1, 'INSERT', 'run-1', now - 10),
    ]);
    const { fn, calls } = fakeFunction(() => ok());
    const { mapping, failures } = startMapping(stream, fn, {
      maximumRecordAgeSeconds: 3600,
      now: () => now * 1000,
    });

    await until(() => expect(mapping.stats.records).toBe(2));
    expect(calls).toEqual([[1]]);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.reason).toBe('RecordAgeExceeded');
    expect(failures[0]?.invocationRecord.responseContext).toBeUndefined();
  });
});

describe('LocalStreamMapping: stop()', () => {
  it('returns promptly while the mapping polls an idle shard or waits out a batching window', async () => {
    const stream = new FakeStream();
    stream.addShard('shard-1', [record(0)]);
    const { fn, calls } = fakeFunction(() => ok());
    // A 5-minute window and a batch that never fills: the mapping waits, and stop() ends the wait.
    const { mapping } = startMapping(stream, fn, { maxBatchingWindowMs: 300_000, pollIntervalMs: 250 });
    await until(() => expect(stream.getRecordsCalls).toBeGreaterThan(1));

    const started = performance.now();
    await mapping.stop();
    expect(performance.now() - started).toBeLessThan(100);
    expect(calls).toEqual([]);

    // Restarted, it resumes with what it had gathered.
    mapping.start();
    await until(() => expect(stream.getRecordsCalls).toBeGreaterThan(3));
    await mapping.stop();
    expect(mapping.stats.records).toBe(0);
  });

  it('waits for the invocation in flight, then stops without another', async () => {
    const stream = new FakeStream();
    stream.addShard(
      'shard-1',
      range(0, 4).map((n) => record(n)),
    );
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { fn, calls } = fakeFunction(async () => {
      await held;
      return ok();
    });
    const { mapping } = startMapping(stream, fn, { batchSize: 2 });
    await until(() => expect(calls).toHaveLength(1));

    let stopped = false;
    const stopping = mapping.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(calls).toEqual([[0, 1]]);
    expect(mapping.stats.records).toBe(2);
  });
});

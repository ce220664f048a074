import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIFO_MAX_BATCH_SIZE } from '../../contract/topology.js';
import { EVENT_ID_ATTRIBUTE, RUN_ID_ATTRIBUTE } from '../../functions/shared/message.js';
import { type Bundles, bundleHandlers } from '../../harness/bundling/bundle.js';
import type { RunningEmulator } from '../../harness/emulators/index.js';
import { startSqsEmulator } from '../../harness/emulators/sqs-emulator.js';
import { readQueueDepth } from '../../harness/environments/queue-depth.js';
import {
  LocalEventSourceMapping,
  MAX_BATCH_PAYLOAD_BYTES,
  type MappingFaults,
} from '../../harness/lambda-runtime/event-source-mapping.js';
import { LocalFunction } from '../../harness/lambda-runtime/local-function.js';
import {
  AWS_SAMPLE_RECORD_WITH_ATTRIBUTES,
  AWS_SAMPLE_RECORD_WITHOUT_ATTRIBUTES,
  compareShape,
  FIELDS_BEYOND_THE_SAMPLE,
} from '../support/aws-sqs-sample-event.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/scripted-handler.mjs', import.meta.url));
const RECORDING = fileURLToPath(new URL('./lambda-runtime-fixtures/recording-handler.mjs', import.meta.url));
const EVENT_RECORDING = fileURLToPath(new URL('../support/event-recording-handler.mjs', import.meta.url));
const FIFO_HANDLER = fileURLToPath(new URL('./lambda-runtime-fixtures/fifo-handler.mjs', import.meta.url));
const VISIBILITY_SECONDS = 2;
/**
 * The FIFO tests that fail a batch and wait for its retry: longer than a loaded machine's first
 * invocation (a cold start included), whose messages would otherwise come back while it still runs.
 */
const FIFO_RETRY_VISIBILITY_SECONDS = 5;

/** One invocation as the recording handler wrote it down. */
interface RecordedInvocation {
  readonly pid: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly records: ReadonlyArray<{
    readonly messageId: string;
    readonly receiveCount: number;
    readonly receiptHandle: string;
    readonly body: string;
  }>;
}

describe('local Lambda SQS event source mapping (real fauxqs, real child processes)', () => {
  let emulator: RunningEmulator;
  let bundles: Bundles;
  let sqs: SQSClient;
  const running: Array<{ mapping: LocalEventSourceMapping; fn: LocalFunction }> = [];
  let queueCount = 0;
  let recordDir: string;
  let recordCount = 0;

  beforeAll(async () => {
    recordDir = mkdtempSync(join(tmpdir(), 'esm-records-'));
    [emulator, bundles] = await Promise.all([startSqsEmulator(), bundleHandlers([])]);
    sqs = new SQSClient({
      region: 'us-east-1',
      endpoint: emulator.endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  });
  afterEach(async () => {
    for (const { mapping, fn } of running.splice(0)) {
      await mapping.stop();
      await fn.stop();
    }
  });
  afterAll(async () => {
    if (recordDir) rmSync(recordDir, { recursive: true, force: true });
    sqs?.destroy();
    await emulator?.stop();
    await bundles?.dispose();
  });

  async function queueWith(
    bodies: object[],
    visibilitySeconds = VISIBILITY_SECONDS,
  ): Promise<{ queueUrl: string; queueArn: string }> {
    queueCount += 1;
    const { QueueUrl = '' } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `esm-${queueCount}`,
        Attributes: { VisibilityTimeout: String(visibilitySeconds) },
      }),
    );
    await send(QueueUrl, bodies);
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    return { queueUrl: QueueUrl, queueArn: Attributes.QueueArn ?? '' };
  }

  async function send(queueUrl: string, bodies: object[]): Promise<void> {
    for (let start = 0; start < bodies.length; start += 10) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: bodies
            .slice(start, start + 10)
            .map((body, index) => ({ Id: String(index), MessageBody: JSON.stringify(body) })),
        }),
      );
    }
  }

  /** A file the recording handler appends one line per invocation to, and a reader for it. */
  function recordFile<Line = RecordedInvocation>(): { path: string; read: () => Line[] } {
    recordCount += 1;
    const path = join(recordDir, `invocations-${recordCount}.jsonl`);
    const read = () => {
      let text = '';
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        return []; // nothing written yet
      }
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Line);
    };
    return { path, read };
  }

  function start(
    queue: { queueUrl: string; queueArn: string },
    options: {
      batchSize?: number;
      maxConcurrency?: number;
      reportBatchItemFailures?: boolean;
      delayMs?: number;
      /** The recording handler, writing to this file, instead of the scripted one. */
      recordTo?: string;
      /** Another handler than the scripted or the recording one. */
      bundlePath?: string;
      environment?: Record<string, string>;
      maxBatchingWindowMs?: number;
      visibilityTimeoutMs?: number;
      faults?: MappingFaults;
      /** The function timeout. */
      timeoutMs?: number;
      fifo?: boolean;
    },
  ) {
    const fn = new LocalFunction({
      name: 'scripted',
      bundlePath: options.bundlePath ?? (options.recordTo ? RECORDING : FIXTURE),
      workerPath: bundles.worker,
      timeoutMs: options.timeoutMs ?? 5000,
      memoryMb: 128,
      environment: {
        BATCH_DELAY_MS: String(options.delayMs ?? 0),
        ...(options.recordTo ? { RECORD_FILE: options.recordTo } : {}),
        ...options.environment,
      },
    });
    const mapping = new LocalEventSourceMapping({
      sqs,
      ...queue,
      region: 'us-east-1',
      fn,
      batchSize: options.batchSize ?? 10,
      maxBatchingWindowMs: options.maxBatchingWindowMs ?? 0,
      maxConcurrency: options.maxConcurrency ?? 2,
      reportBatchItemFailures: options.reportBatchItemFailures ?? true,
      ...(options.visibilityTimeoutMs === undefined
        ? {}
        : { visibilityTimeoutMs: options.visibilityTimeoutMs }),
      ...(options.faults ? { faults: options.faults } : {}),
      ...(options.fifo ? { fifo: true } : {}),
      onFatal: (error) => {
        throw error;
      },
    });
    running.push({ mapping, fn });
    mapping.start();
    return { mapping, fn };
  }

  async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const empty = async (queueUrl: string) => {
    const depth = await readQueueDepth(sqs, queueUrl);
    return depth.visible === 0 && depth.inFlight === 0;
  };

  it('deletes a successful batch', async () => {
    const queue = await queueWith(Array.from({ length: 25 }, (_, index) => ({ index })));
    const { mapping } = start(queue, { visibilityTimeoutMs: VISIBILITY_SECONDS * 1000 });
    await until(() => empty(queue.queueUrl));
    expect(mapping.stats).toMatchObject({
      deliveries: 25,
      acknowledged: 25,
      failedBatches: 0,
      visibilityOverruns: 0,
      redelivered: 0,
      inFlight: 0,
    });
  });

  it('receives every system attribute a record needs when it asks for all of them (fauxqs)', async () => {
    const queue = await queueWith([{ index: 0 }]);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, MessageSystemAttributeNames: ['All'] }),
    );
    expect(Messages[0]?.Attributes).toEqual(
      expect.objectContaining({
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d+$/),
        SenderId: expect.any(String),
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d+$/),
      }),
    );
  });

  it("hands the handler records with every field of AWS's documented sample record, with the same types", async () => {
    const queue = await queueWith([]);
    // A message as the producer sends it (a body and the two String attributes it stamps: see
    // harness/experiment/producer.ts), and one without message attributes.
    const body = JSON.stringify({ eventId: 'evt-shape', runId: 'run-shape', accountId: 'a', amountCents: 1 });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.queueUrl,
        MessageBody: body,
        MessageAttributes: {
          [RUN_ID_ATTRIBUTE]: { DataType: 'String', StringValue: 'run-shape' },
          [EVENT_ID_ATTRIBUTE]: { DataType: 'String', StringValue: 'evt-shape' },
        },
      }),
    );
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: 'no attributes' }));
    recordCount += 1;
    const eventFile = join(recordDir, `events-${recordCount}.jsonl`);
    const { mapping } = start(queue, { bundlePath: EVENT_RECORDING, environment: { EVENT_FILE: eventFile } });
    await until(() => mapping.stats.acknowledged === 2);
    const records = readFileSync(eventFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .flatMap((line) => (JSON.parse(line) as SQSEvent).Records);
    const produced = records.find((record) => record.body === body);
    const plain = records.find((record) => record.body === 'no attributes');

    expect(compareShape(AWS_SAMPLE_RECORD_WITH_ATTRIBUTES, produced, ['messageAttributes'])).toEqual({
      missing: [],
      mistyped: [],
      extra: FIELDS_BEYOND_THE_SAMPLE,
    });
    // The comparison went through the producer's attributes, not an empty map.
    expect(Object.keys(produced?.messageAttributes ?? {}).sort()).toEqual(['eventId', 'runId']);
    expect(compareShape(AWS_SAMPLE_RECORD_WITHOUT_ATTRIBUTES, plain)).toEqual({
      missing: [],
      mistyped: [],
      extra: {},
    });
    // And the values are this queue's and this message's, not placeholders.
    expect(produced).toMatchObject({
      eventSource: 'aws:sqs',
      eventSourceARN: queue.queueArn,
      awsRegion: 'us-east-1',
      md5OfBody: createHash('md5').update(body).digest('hex'),
      md5OfMessageAttributes: expect.stringMatching(/^[0-9a-f]{32}$/),
      attributes: { ApproximateReceiveCount: '1', SenderId: expect.any(String) },
      messageAttributes: { eventId: { stringValue: 'evt-shape' }, runId: { stringValue: 'run-shape' } },
    });
  });

  it('fails the whole batch when the response is a top-level array: nothing is deleted', async () => {
    const queue = await queueWith([{ index: 0 }, { index: 1 }]);
    const records = recordFile();
    const { mapping } = start(queue, {
      batchSize: 2,
      recordTo: records.path,
      environment: { RESPONSE: 'array' },
    });
    await until(() => mapping.stats.failedBatches >= 1);
    await mapping.stop();
    expect(mapping.stats.acknowledged).toBe(0);
    const depth = await readQueueDepth(sqs, queue.queueUrl);
    expect(depth.visible + depth.inFlight).toBe(2);
  });

  describe('batching window', () => {
    it('counts the window from the first record, not from the start of polling', async () => {
      const queue = await queueWith([]);
      const records = recordFile();
      const { mapping } = start(queue, {
        maxConcurrency: 1,
        maxBatchingWindowMs: 1500,
        recordTo: records.path,
      });
      // Polling an empty queue for longer than the window: the window has not started yet.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await send(queue.queueUrl, [{ index: 0 }]);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await send(queue.queueUrl, [{ index: 1 }, { index: 2 }, { index: 3 }, { index: 4 }]);
      await until(() => mapping.stats.acknowledged === 5);
      expect(records.read().map((invocation) => invocation.records.length)).toEqual([5]);
    });

    it('invokes as soon as the batch is full, before the window ends', async () => {
      const queue = await queueWith([{ index: 0 }]);
      const records = recordFile();
      const started = Date.now();
      const { mapping } = start(queue, {
        batchSize: 3,
        maxConcurrency: 1,
        maxBatchingWindowMs: 6000,
        recordTo: records.path,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await send(queue.queueUrl, [{ index: 1 }, { index: 2 }]);
      await until(() => mapping.stats.acknowledged === 3);
      expect(Date.now() - started).toBeLessThan(4000);
      expect(records.read().map((invocation) => invocation.records.length)).toEqual([3]);
    });

    it('closes a batch at the 6 MB invocation payload limit and opens the next with the rest', async () => {
      // Handing 6 MB to the function can outlast a 2 s visibility timeout, and even a 5 s function
      // timeout, on a loaded machine: the records would come back mid-invocation and be acknowledged
      // twice, or time out. Nothing here is about redelivery or timeouts, so neither may happen.
      const queue = await queueWith([], 60);
      const pad = 'x'.repeat(240 * 1024);
      await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          sqs.send(
            new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: JSON.stringify({ index, pad }) }),
          ),
        ),
      );
      const records = recordFile();
      const { mapping } = start(queue, {
        batchSize: 100,
        maxConcurrency: 1,
        maxBatchingWindowMs: 1000,
        recordTo: records.path,
        timeoutMs: 30_000,
      });
      await until(() => mapping.stats.acknowledged === 30, 60_000);
      const payloads = records
        .read()
        .map((invocation) =>
          invocation.records.reduce((sum, record) => sum + Buffer.byteLength(record.body), 0),
        );
      expect(payloads.length).toBeGreaterThanOrEqual(2);
      for (const bytes of payloads) expect(bytes).toBeLessThanOrEqual(MAX_BATCH_PAYLOAD_BYTES);
      expect(payloads[0]).toBeGreaterThan(MAX_BATCH_PAYLOAD_BYTES - 250 * 1024);
    });
  });

  describe('injected faults', () => {
    it('hands each record of a successful batch over again: same id and receipt handle, receive count + 1, in flight until then', async () => {
      const queue = await queueWith([{ eventId: 'evt-a' }, { eventId: 'evt-b' }, { eventId: 'evt-c' }]);
      const records = recordFile();
      const { mapping } = start(queue, {
        maxConcurrency: 1,
        delayMs: 500,
        recordTo: records.path,
        faults: { seed: 'redelivery', redeliveryRate: 1 },
      });
      await until(() => mapping.stats.deliveries === 3);
      // Stopped mid-invocation: the copies are drawn when it succeeds and cannot be handed over.
      await mapping.stop();
      expect(mapping.stats).toMatchObject({
        acknowledged: 3,
        redelivered: 3,
        pendingRedeliveries: 3,
        inFlight: 3,
      });
      // SQS is empty; only the mapping's inFlight keeps a drain from declaring the run done.
      expect(await empty(queue.queueUrl)).toBe(true);

      mapping.start();
      await until(() => mapping.stats.deliveries === 6 && mapping.stats.inFlight === 0);
      const [first, second] = records.read();
      const view = (invocation: RecordedInvocation | undefined) =>
        invocation?.records.map(({ messageId, receiptHandle, body }) => ({ messageId, receiptHandle, body }));
      expect(view(second)).toEqual(view(first));
      expect(first?.records.map((record) => record.receiveCount)).toEqual([1, 1, 1]);
      expect(second?.records.map((record) => record.receiveCount)).toEqual([2, 2, 2]);
      // The copies' stale receipt handles delete nothing and fail nothing; a copy is never copied again.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(mapping.stats).toMatchObject({
        deliveries: 6,
        acknowledged: 6,
        failedBatches: 0,
        redelivered: 3,
        pendingRedeliveries: 0,
      });
    });

    it('kills invocations at a random moment: a Runtime.ExitError that deletes nothing, and SQS redelivers', async () => {
      const queue = await queueWith([{ eventId: 'evt-k1' }, { eventId: 'evt-k2' }]);
      const { mapping, fn } = start(queue, {
        batchSize: 1,
        delayMs: 200,
        faults: { seed: 'kill', killRate: 1 },
      });
      // Delivered, killed, back after the visibility timeout, killed again.
      await until(() => mapping.stats.deliveries >= 4, 12_000);
      await mapping.stop();
      expect(fn.stats.injectedKills).toBeGreaterThanOrEqual(4);
      expect(fn.stats.exits).toBe(fn.stats.injectedKills);
      expect(mapping.stats).toMatchObject({ acknowledged: 0, failedBatches: mapping.stats.deliveries });
      const depth = await readQueueDepth(sqs, queue.queueUrl);
      expect(depth.visible + depth.inFlight).toBe(2);
    });

    it('lets a slow invocation outlive the visibility timeout: the same message runs twice at once, counted as overruns', async () => {
      const queue = await queueWith([{ eventId: 'evt-slow' }]);
      const records = recordFile();
      const { mapping } = start(queue, {
        batchSize: 1,
        maxConcurrency: 2,
        recordTo: records.path,
        visibilityTimeoutMs: VISIBILITY_SECONDS * 1000,
        faults: { seed: 'slow', workDelayMs: 3000, workDelayRate: 1 },
      });
      await until(() => records.read().length >= 2, 15_000);
      await mapping.stop();
      // One message, two batches in flight at once: the second received it while the first ran.
      expect(mapping.stats.peakBatchesInFlight).toBe(2);
      expect(mapping.stats.slowInvocations).toBeGreaterThanOrEqual(2);
      expect(mapping.stats.visibilityOverruns).toBeGreaterThanOrEqual(2);
      const [first, second] = records.read();
      expect(second?.records[0]?.messageId).toBe(first?.records[0]?.messageId);
      expect([first?.records[0]?.receiveCount, second?.records[0]?.receiveCount]).toEqual([1, 2]);
    });
  });

  it('with ReportBatchItemFailures deletes all but the listed records, which come back after the visibility timeout', async () => {
    const queue = await queueWith([{ index: 0 }, { index: 1, fail: true }, { index: 2 }]);
    const { mapping } = start(queue, { batchSize: 3 });
    await until(() => mapping.stats.acknowledged === 2);
    // The failed record is redelivered (receive count 2, 3, …) until this test stops the mapping.
    await until(() => mapping.stats.deliveries >= 4, 10_000);
    await mapping.stop();
    const depth = await readQueueDepth(sqs, queue.queueUrl);
    expect(depth.visible + depth.inFlight).toBe(1);
  });

  it('fails the whole batch when an itemIdentifier is not in it: nothing is deleted', async () => {
    const queue = await queueWith([{ index: 0 }, { index: 1, fail: true, invalidId: true }]);
    const { mapping } = start(queue, { batchSize: 2 });
    await until(() => mapping.stats.failedBatches >= 1);
    await mapping.stop();
    expect(mapping.stats.acknowledged).toBe(0);
    const depth = await readQueueDepth(sqs, queue.queueUrl);
    expect(depth.visible + depth.inFlight).toBe(2);
  });

  it('deletes nothing when the environment dies mid-invocation; SQS redelivers the batch', async () => {
    const queue = await queueWith([{ action: 'sigkill' }]);
    const { mapping, fn } = start(queue, { batchSize: 1 });
    await until(() => fn.stats.exits >= 2, 12_000); // delivered, killed, redelivered after the visibility timeout, killed
    await mapping.stop();
    expect(mapping.stats.acknowledged).toBe(0);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.queueUrl,
        WaitTimeSeconds: VISIBILITY_SECONDS + 1,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    expect(Number(Messages[0]?.Attributes?.ApproximateReceiveCount)).toBeGreaterThanOrEqual(3);
  });

  it('keeps at most maxConcurrency batches in flight, and uses that many', async () => {
    const queue = await queueWith(Array.from({ length: 60 }, (_, index) => ({ index })));
    const { mapping, fn } = start(queue, { batchSize: 5, maxConcurrency: 3, delayMs: 300 });
    await until(() => empty(queue.queueUrl), 20_000);
    expect(mapping.stats.peakBatchesInFlight).toBe(3);
    expect(fn.stats.coldStarts).toBeLessThanOrEqual(3);
    expect(mapping.stats.acknowledged).toBe(60);
  });

  describe('FIFO', () => {
    /** A message for a FIFO queue: its id (in the body, and its deduplication id), its group, and how long it fails. */
    interface FifoMessage {
      readonly id: string;
      readonly group: string;
      /** The record fails while its receive count is at most this (the FIFO handler's rule). */
      readonly failReceives?: number;
    }

    /** One invocation as the FIFO handler wrote it down. */
    interface FifoInvocation {
      readonly startedAt: number;
      readonly endedAt: number;
      readonly records: ReadonlyArray<{
        readonly messageId: string;
        readonly id: string;
        readonly group: string;
        readonly sequenceNumber: string;
        readonly receiveCount: number;
      }>;
      /** Whether it threw (a whole-batch failure). */
      readonly threw: boolean;
      /** The ids it reported in batchItemFailures (or would have, when it threw). */
      readonly failed: readonly string[];
    }

    /** A fresh FIFO queue holding `messages`, sent in order: one batch after the other, entries in order. */
    async function fifoQueueWith(
      messages: readonly FifoMessage[],
      visibilitySeconds: number,
    ): Promise<{ queueUrl: string; queueArn: string }> {
      queueCount += 1;
      const { QueueUrl = '' } = await sqs.send(
        new CreateQueueCommand({
          QueueName: `esm-${queueCount}.fifo`,
          Attributes: {
            FifoQueue: 'true',
            ContentBasedDeduplication: 'false',
            VisibilityTimeout: String(visibilitySeconds),
          },
        }),
      );
      for (let first = 0; first < messages.length; first += 10) {
        const { Failed = [] } = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl,
            Entries: messages.slice(first, first + 10).map((message, index) => ({
              Id: String(index),
              MessageBody: JSON.stringify(message),
              MessageGroupId: message.group,
              MessageDeduplicationId: message.id,
            })),
          }),
        );
        expect(Failed).toEqual([]);
      }
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
      );
      return { queueUrl: QueueUrl, queueArn: Attributes.QueueArn ?? '' };
    }

    function startFifo(
      queue: { queueUrl: string; queueArn: string },
      records: { path: string },
      options: { batchSize: number; maxConcurrency: number; delayMs?: number; failure?: 'throw' | 'fifo' },
    ) {
      return start(queue, {
        fifo: true,
        batchSize: options.batchSize,
        maxConcurrency: options.maxConcurrency,
        delayMs: options.delayMs ?? 0,
        bundlePath: FIFO_HANDLER,
        recordTo: records.path,
        environment: { FAILURE: options.failure ?? 'fifo' },
      });
    }

    /** `A1`, `A2`, …: a group's message ids in send order. */
    const idsOf = (group: string, count: number, from = 1) =>
      Array.from({ length: count }, (_, index) => `${group}${from + index}`);

    /**
     * A group's records in the order the function was handed them. The file is in the order the
     * invocations ended, which for one group is the order they started: its batches never overlap
     * (checked where it matters).
     */
    const deliveriesOf = (invocations: readonly FifoInvocation[], group: string) =>
      invocations.flatMap((invocation) =>
        invocation.records.filter((record) => record.group === group).map((record) => record.id),
      );

    /** A group's records the function succeeded with (not thrown, not reported), in order. */
    const processedOf = (invocations: readonly FifoInvocation[], group: string) =>
      invocations.flatMap((invocation) =>
        invocation.threw
          ? []
          : invocation.records
              .filter((record) => record.group === group && !invocation.failed.includes(record.id))
              .map((record) => record.id),
      );

    it('refuses a batch size above 10 and any batching window for a FIFO queue, as Lambda does', () => {
      // Never started: the constructor refuses before anything runs.
      const fn = new LocalFunction({
        name: 'never-started',
        bundlePath: FIXTURE,
        workerPath: bundles.worker,
        timeoutMs: 5000,
        memoryMb: 128,
        environment: {},
      });
      const mapping = (batchSize: number, maxBatchingWindowMs: number, fifo: boolean) =>
        new LocalEventSourceMapping({
          sqs,
          queueUrl: 'http://127.0.0.1:1/000000000000/never.fifo',
          queueArn: 'arn:aws:sqs:us-east-1:000000000000:never.fifo',
          region: 'us-east-1',
          fn,
          batchSize,
          maxBatchingWindowMs,
          maxConcurrency: 1,
          reportBatchItemFailures: true,
          fifo,
          onFatal: (error) => {
            throw error;
          },
        });
      expect(FIFO_MAX_BATCH_SIZE).toBe(10);
      expect(() => mapping(11, 0, true)).toThrow(RangeError);
      expect(() => mapping(11, 0, true)).toThrow(
        'a FIFO event source takes at most 10 records per batch and no batching window ' +
          '(got batch size 11, window 0 ms), as Lambda requires',
      );
      expect(() => mapping(10, 500, true)).toThrow(/no batching window \(got batch size 10, window 500 ms\)/);
      expect(() => mapping(100, 1000, true)).toThrow(RangeError);
      // At the limits, and on a standard queue, nothing is refused.
      expect(() => mapping(10, 0, true)).not.toThrow();
      expect(() => mapping(1, 0, true)).not.toThrow();
      expect(() => mapping(11, 500, false)).not.toThrow();
    });

    it("hands each group's records to the function in send order, across batches, one batch per group at a time", async () => {
      const groups = ['A', 'B', 'C'];
      // Interleaved: A1, B1, C1, A2, B2, C2, …
      const messages = Array.from({ length: 8 }, (_, index) =>
        groups.map((group) => ({ id: `${group}${index + 1}`, group })),
      ).flat();
      const queue = await fifoQueueWith(messages, 10);
      const records = recordFile<FifoInvocation>();
      const { mapping } = startFifo(queue, records, { batchSize: 4, maxConcurrency: 3, delayMs: 50 });
      await until(() => mapping.stats.acknowledged === 24);
      const invocations = records.read();

      for (const group of groups) {
        expect(deliveriesOf(invocations, group), group).toEqual(idsOf(group, 8));
        // SQS's sequence numbers (compared as BigInt: 20 digits) grow in the same order.
        const sequence = invocations.flatMap((invocation) =>
          invocation.records
            .filter((record) => record.group === group)
            .map((record) => record.sequenceNumber),
        );
        for (const [index, value] of sequence.entries()) {
          if (index > 0) expect(BigInt(value) > BigInt(sequence[index - 1] ?? '0'), group).toBe(true);
        }
        // One batch per group in flight: a group's invocations never overlap.
        const spans = invocations
          .filter((invocation) => invocation.records.some((record) => record.group === group))
          .sort((a, b) => a.startedAt - b.startedAt);
        for (const [index, span] of spans.entries()) {
          if (index > 0) expect(span.startedAt, group).toBeGreaterThanOrEqual(spans[index - 1]?.endedAt ?? 0);
        }
      }
      // Across batches, each within the batch size.
      expect(invocations.length).toBeGreaterThanOrEqual(6);
      for (const invocation of invocations) expect(invocation.records.length).toBeLessThanOrEqual(4);
      expect(mapping.stats).toMatchObject({
        deliveries: 24,
        acknowledged: 24,
        failedBatches: 0,
        inFlight: 0,
      });
      expect(await empty(queue.queueUrl)).toBe(true);
    });

    it('puts several groups in one batch, and several records of one group in send order (what the fauxqs patch makes true)', async () => {
      // Unpatched, fauxqs 1.9.2 returns at most one message per group per receive: [A1, B1, C1].
      const queue = await fifoQueueWith(
        [
          { id: 'A1', group: 'A' },
          { id: 'B1', group: 'B' },
          { id: 'A2', group: 'A' },
          { id: 'C1', group: 'C' },
          { id: 'B2', group: 'B' },
          { id: 'A3', group: 'A' },
        ],
        10,
      );
      const records = recordFile<FifoInvocation>();
      const { mapping } = startFifo(queue, records, { batchSize: 10, maxConcurrency: 1 });
      await until(() => mapping.stats.acknowledged === 6);
      const invocations = records.read();
      expect(invocations).toHaveLength(1);
      const [batch] = invocations;
      expect(batch?.records).toHaveLength(6);
      expect(deliveriesOf(invocations, 'A')).toEqual(['A1', 'A2', 'A3']);
      expect(deliveriesOf(invocations, 'B')).toEqual(['B1', 'B2']);
      expect(deliveriesOf(invocations, 'C')).toEqual(['C1']);
      // Each record carries its group, as Lambda's FIFO records do.
      expect(new Set(batch?.records.map((record) => record.group))).toEqual(new Set(['A', 'B', 'C']));
    });

    it.each([
      ['the batch throws', 'throw'],
      ['a partial batch response reports it and every later record', 'fifo'],
    ] as const)(
      'blocks a group after a failure (%s): its retries come before any later message of the group, while another group goes on',
      async (_, failure) => {
        // A1, B1, A2, B2, …; A2 fails on its first receive.
        const messages = Array.from({ length: 6 }, (_, index) => [
          { id: `A${index + 1}`, group: 'A', ...(index === 1 ? { failReceives: 1 } : {}) },
          { id: `B${index + 1}`, group: 'B' },
        ]).flat();
        const queue = await fifoQueueWith(messages, FIFO_RETRY_VISIBILITY_SECONDS);
        const records = recordFile<FifoInvocation>();
        const { mapping } = startFifo(queue, records, { batchSize: 3, maxConcurrency: 2, failure });
        await until(() => mapping.stats.acknowledged === 12);
        const invocations = records.read();

        const failedIndex = invocations.findIndex((invocation) => invocation.failed.length > 0);
        const failed = invocations[failedIndex];
        expect(failed?.records.map((record) => record.id)).toEqual(['A1', 'A2', 'A3']);
        expect(failed?.threw).toBe(failure === 'throw');
        // What SQS still holds of the failed batch: all of it after a throw, the reported records after
        // a partial batch response (the FIFO rule: the first failure and every later record).
        const retried = failure === 'throw' ? ['A1', 'A2', 'A3'] : ['A2', 'A3'];
        if (failure === 'fifo') expect(failed?.failed).toEqual(['A2', 'A3']);

        // The group's next records are exactly those, in order, before A4; each message is processed
        // once, in send order.
        expect(deliveriesOf(invocations, 'A')).toEqual(['A1', 'A2', 'A3', ...retried, ...idsOf('A', 3, 4)]);
        expect(processedOf(invocations, 'A')).toEqual(idsOf('A', 6));
        const retry = invocations
          .slice(failedIndex + 1)
          .find((invocation) => invocation.records.some((record) => record.group === 'A'));
        expect(
          retry?.records.slice(0, retried.length).map((record) => [record.id, record.receiveCount]),
        ).toEqual(retried.map((id) => [id, 2]));
        // (When the retry comes is SQS's visibility timeout, counted from the receive, which the
        // handler cannot see: on a loaded machine the invocation itself starts late. The order above
        // is the FIFO property; no timing is asserted.)

        // B went on: all of it, once, in order, never held back or failed with A (receive count 1).
        // (Not "all of B before A's retry": on a loaded machine B's last batch may still be running
        // when A's visibility timeout ends.)
        expect(deliveriesOf(invocations, 'B')).toEqual(idsOf('B', 6));
        const bReceives = invocations.flatMap((invocation) =>
          invocation.records.filter((record) => record.group === 'B').map((record) => record.receiveCount),
        );
        expect(bReceives).toEqual(Array(6).fill(1));

        expect(mapping.stats).toMatchObject({
          acknowledged: 12,
          deliveries: 12 + retried.length,
          failedBatches: failure === 'throw' ? 1 : 0,
          inFlight: 0,
        });
        expect(await empty(queue.queueUrl)).toBe(true);
      },
    );

    it('applies a FIFO partial batch response: deletes the records before the first failure, and the reported ones come back in order', async () => {
      // One batch: A1 A2 A3 A4 B1 B2 (the patched receive). A3 fails once, so the handler reports A3
      // and every later record, B's included.
      const queue = await fifoQueueWith(
        [
          { id: 'A1', group: 'A' },
          { id: 'A2', group: 'A' },
          { id: 'A3', group: 'A', failReceives: 1 },
          { id: 'A4', group: 'A' },
          { id: 'B1', group: 'B' },
          { id: 'B2', group: 'B' },
        ],
        FIFO_RETRY_VISIBILITY_SECONDS,
      );
      const records = recordFile<FifoInvocation>();
      const { mapping } = startFifo(queue, records, { batchSize: 10, maxConcurrency: 1 });
      await until(() => mapping.stats.acknowledged === 6);
      const [first, second, ...more] = records.read();
      expect(more).toEqual([]);
      expect(first?.records.map((record) => record.id)).toEqual(['A1', 'A2', 'A3', 'A4', 'B1', 'B2']);
      expect(first?.failed).toEqual(['A3', 'A4', 'B1', 'B2']);
      // The reported-successful A1 and A2 were deleted: never handed over again. The reported ones
      // came back, each group in order, on their second receive.
      const view = (invocation: FifoInvocation | undefined) =>
        invocation?.records.map((record) => [record.group, record.id, record.receiveCount]);
      expect(view(second)?.filter(([group]) => group === 'A')).toEqual([
        ['A', 'A3', 2],
        ['A', 'A4', 2],
      ]);
      expect(view(second)?.filter(([group]) => group === 'B')).toEqual([
        ['B', 'B1', 2],
        ['B', 'B2', 2],
      ]);
      expect(second?.failed).toEqual([]);
      expect(mapping.stats).toMatchObject({ deliveries: 10, acknowledged: 6, failedBatches: 0, inFlight: 0 });
      expect(await empty(queue.queueUrl)).toBe(true);
    });
  });
});

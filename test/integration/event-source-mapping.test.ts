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
const VISIBILITY_SECONDS = 2;

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
  function recordFile(): { path: string; read: () => RecordedInvocation[] } {
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
        .map((line) => JSON.parse(line) as RecordedInvocation);
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
});

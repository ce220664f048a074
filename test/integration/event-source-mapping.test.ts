import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { EVENT_ID_ATTRIBUTE, RUN_ID_ATTRIBUTE } from '../../contract/message.js';
import { readQueueDepth } from '../../harness/environments/queue-depth.js';
import { MAX_BATCH_PAYLOAD_BYTES } from '../../harness/local-aws/lambda-runtime/event-source-mapping.js';
import {
  AWS_SAMPLE_RECORD_WITH_ATTRIBUTES,
  AWS_SAMPLE_RECORD_WITHOUT_ATTRIBUTES,
  compareShape,
  FIELDS_BEYOND_THE_SAMPLE,
} from '../support/aws-sqs-sample-event.js';
import { useMappingLab, VISIBILITY_SECONDS } from '../support/mapping-lab.js';

const EVENT_RECORDING = fileURLToPath(new URL('../support/event-recording-handler.mjs', import.meta.url));

describe('local Lambda SQS event source mapping (real fauxqs, real child processes)', () => {
  const lab = useMappingLab();
  const { queueWith, send, recordFile, start, until, empty } = lab;

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
    const { Messages = [] } = await lab
      .sqs()
      .send(new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, MessageSystemAttributeNames: ['All'] }));
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
    // harness/run/producer.ts), and one without message attributes.
    const body = JSON.stringify({ eventId: 'evt-shape', runId: 'run-shape', accountId: 'a', amountCents: 1 });
    await lab.sqs().send(
      new SendMessageCommand({
        QueueUrl: queue.queueUrl,
        MessageBody: body,
        MessageAttributes: {
          [RUN_ID_ATTRIBUTE]: { DataType: 'String', StringValue: 'run-shape' },
          [EVENT_ID_ATTRIBUTE]: { DataType: 'String', StringValue: 'evt-shape' },
        },
      }),
    );
    await lab.sqs().send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: 'no attributes' }));
    const eventFile = lab.nextFile('events');
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
    const depth = await readQueueDepth(lab.sqs(), queue.queueUrl);
    expect(depth.visible + depth.inFlight).toBe(2);
  });

  it('counts the rounds: a failed batch comes back as the next receive count, a visibility timeout after its receive', async () => {
    const queue = await queueWith([{ index: 0 }, { index: 1 }]);
    // One poller: both records in one batch, receive after receive.
    const { mapping } = start(queue, {
      batchSize: 2,
      maxConcurrency: 1,
      recordTo: recordFile().path,
      visibilityTimeoutMs: VISIBILITY_SECONDS * 1000,
      environment: { RESPONSE: 'array' },
    });
    await until(() => mapping.stats.failedBatches >= 2, 10_000);
    await mapping.stop();
    const [first, second] = mapping.rounds.snapshot();
    expect(first).toMatchObject({ receiveCount: 1, records: 2, failedBatches: 1 });
    expect(second).toMatchObject({ receiveCount: 2, records: 2, failedBatches: 1 });
    // SQS hid them for the visibility timeout from their receive, whatever the invocation took.
    expect(second?.firstReceivedAtMs ?? 0).toBeGreaterThanOrEqual(
      (first?.firstReceivedAtMs ?? 0) + VISIBILITY_SECONDS * 1000 - 50,
    );
  });

  it('stops at once: a long poll waiting on an empty queue is cut short, not waited out', async () => {
    const queue = await queueWith([]);
    const { mapping } = start(queue, { waitTimeSeconds: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    await mapping.stop();
    // Not a speed goal: waited out, the poll would end 20 s after it began.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('polls again when started after a stop: a message sent meanwhile is delivered and deleted', async () => {
    const queue = await queueWith([]);
    const { mapping } = start(queue, { waitTimeSeconds: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await mapping.stop();
    await send(queue.queueUrl, [{ index: 0 }]);
    mapping.start();
    await until(() => mapping.stats.acknowledged === 1);
    expect(mapping.stats).toMatchObject({ deliveries: 1, acknowledged: 1, failedBatches: 0 });
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
          lab.sqs().send(
            new SendMessageCommand({
              QueueUrl: queue.queueUrl,
              MessageBody: JSON.stringify({ index, pad }),
            }),
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

  it('with ReportBatchItemFailures deletes all but the listed records, which come back after the visibility timeout', async () => {
    const queue = await queueWith([{ index: 0 }, { index: 1, fail: true }, { index: 2 }]);
    const { mapping } = start(queue, { batchSize: 3 });
    await until(() => mapping.stats.acknowledged === 2);
    // The failed record is redelivered (receive count 2, 3, …) until this test stops the mapping.
    await until(() => mapping.stats.deliveries >= 4, 10_000);
    await mapping.stop();
    const depth = await readQueueDepth(lab.sqs(), queue.queueUrl);
    expect(depth.visible + depth.inFlight).toBe(1);
  });

  it('fails the whole batch when an itemIdentifier is not in it: nothing is deleted', async () => {
    const queue = await queueWith([{ index: 0 }, { index: 1, fail: true, invalidId: true }]);
    const { mapping } = start(queue, { batchSize: 2 });
    await until(() => mapping.stats.failedBatches >= 1);
    await mapping.stop();
    expect(mapping.stats.acknowledged).toBe(0);
    const depth = await readQueueDepth(lab.sqs(), queue.queueUrl);
    expect(depth.visible + depth.inFlight).toBe(2);
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

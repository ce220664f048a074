import { fileURLToPath } from 'node:url';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Bundles, bundleHandlers } from '../../harness/bundle.js';
import type { RunningEmulator } from '../../harness/emulators/index.js';
import { startSqsEmulator } from '../../harness/emulators/sqs-emulator.js';
import { readQueueDepth } from '../../harness/environments/queue-depth.js';
import { LocalEventSourceMapping } from '../../harness/lambda-runtime/event-source-mapping.js';
import { LocalFunction } from '../../harness/lambda-runtime/local-function.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/scripted-handler.mjs', import.meta.url));
const VISIBILITY_SECONDS = 2;

describe('local Lambda SQS event source mapping (real fauxqs, real child processes)', () => {
  let emulator: RunningEmulator;
  let bundles: Bundles;
  let sqs: SQSClient;
  const running: Array<{ mapping: LocalEventSourceMapping; fn: LocalFunction }> = [];
  let queueCount = 0;

  beforeAll(async () => {
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
    sqs?.destroy();
    await emulator?.stop();
    await bundles?.dispose();
  });

  async function queueWith(bodies: object[]): Promise<{ queueUrl: string; queueArn: string }> {
    queueCount += 1;
    const { QueueUrl = '' } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `esm-${queueCount}`,
        Attributes: { VisibilityTimeout: String(VISIBILITY_SECONDS) },
      }),
    );
    for (let start = 0; start < bodies.length; start += 10) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl,
          Entries: bodies
            .slice(start, start + 10)
            .map((body, index) => ({ Id: String(index), MessageBody: JSON.stringify(body) })),
        }),
      );
    }
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    return { queueUrl: QueueUrl, queueArn: Attributes.QueueArn ?? '' };
  }

  function start(
    queue: { queueUrl: string; queueArn: string },
    options: {
      batchSize?: number;
      maxConcurrency?: number;
      reportBatchItemFailures?: boolean;
      delayMs?: number;
    },
  ) {
    const fn = new LocalFunction({
      name: 'scripted',
      bundlePath: FIXTURE,
      workerPath: bundles.worker,
      timeoutMs: 5000,
      memoryMb: 128,
      environment: { BATCH_DELAY_MS: String(options.delayMs ?? 0) },
    });
    const mapping = new LocalEventSourceMapping({
      sqs,
      ...queue,
      region: 'us-east-1',
      fn,
      batchSize: options.batchSize ?? 10,
      maxBatchingWindowMs: 0,
      maxConcurrency: options.maxConcurrency ?? 2,
      reportBatchItemFailures: options.reportBatchItemFailures ?? true,
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
    const { mapping } = start(queue, {});
    await until(() => empty(queue.queueUrl));
    expect(mapping.stats).toMatchObject({ deliveries: 25, acknowledged: 25, failedBatches: 0 });
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

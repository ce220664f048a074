import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { readQueueDepth } from '../../harness/environments/queue-depth.js';
import { type RecordedInvocation, useMappingLab, VISIBILITY_SECONDS } from '../support/mapping-lab.js';

/**
 * The local mapping when things go wrong: redeliveries, kills at any moment, a slow invocation
 * outliving the visibility timeout, an environment dying mid-invocation (its own file so that it
 * runs beside event-source-mapping.test.ts: both mostly wait for visibility timeouts).
 */
describe('local Lambda SQS event source mapping, injected faults (real fauxqs, real child processes)', () => {
  const lab = useMappingLab();
  const { queueWith, recordFile, start, until, empty } = lab;

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
    const depth = await readQueueDepth(lab.sqs(), queue.queueUrl);
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

  it('deletes nothing when the environment dies mid-invocation; SQS redelivers the batch', async () => {
    const queue = await queueWith([{ action: 'sigkill' }]);
    const { mapping, fn } = start(queue, { batchSize: 1 });
    await until(() => fn.stats.exits >= 2, 12_000); // delivered, killed, redelivered after the visibility timeout, killed
    await mapping.stop();
    expect(mapping.stats.acknowledged).toBe(0);
    const { Messages = [] } = await lab.sqs().send(
      new ReceiveMessageCommand({
        QueueUrl: queue.queueUrl,
        WaitTimeSeconds: VISIBILITY_SECONDS + 1,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    expect(Number(Messages[0]?.Attributes?.ApproximateReceiveCount)).toBeGreaterThanOrEqual(3);
  });
});

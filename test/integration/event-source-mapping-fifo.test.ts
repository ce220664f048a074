import { fileURLToPath } from 'node:url';
import { CreateQueueCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { FIFO_MAX_BATCH_SIZE } from '../../contract/topology.js';
import { LocalEventSourceMapping } from '../../harness/local-aws/lambda-runtime/event-source-mapping.js';
import { LocalFunction } from '../../harness/local-aws/lambda-runtime/local-function.js';
import { SCRIPTED_HANDLER, useMappingLab } from '../support/mapping-lab.js';

const FIFO_HANDLER = fileURLToPath(new URL('./lambda-runtime-fixtures/fifo-handler.mjs', import.meta.url));
/**
 * The FIFO tests that fail a batch and wait for its retry: longer than a loaded machine's first
 * invocation (a cold start included), whose messages would otherwise come back while it still runs.
 */
const FIFO_RETRY_VISIBILITY_SECONDS = 5;

/**
 * The local mapping on FIFO queues (its own file so that it runs beside the standard queue's
 * tests: both mostly wait for visibility timeouts).
 */
describe('local Lambda SQS event source mapping, FIFO (real fauxqs, real child processes)', () => {
  const lab = useMappingLab();
  const { start, until, empty } = lab;
  const { recordFile } = lab;

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
    const { QueueUrl = '' } = await lab.sqs().send(
      new CreateQueueCommand({
        QueueName: lab.nextQueueName(true),
        Attributes: {
          FifoQueue: 'true',
          ContentBasedDeduplication: 'false',
          VisibilityTimeout: String(visibilitySeconds),
        },
      }),
    );
    for (let first = 0; first < messages.length; first += 10) {
      const { Failed = [] } = await lab.sqs().send(
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
    return { queueUrl: QueueUrl, queueArn: await lab.queueArnOf(QueueUrl) };
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
      bundlePath: SCRIPTED_HANDLER,
      workerPath: lab.worker(),
      timeoutMs: 5000,
      memoryMb: 128,
      environment: {},
    });
    const mapping = (batchSize: number, maxBatchingWindowMs: number, fifo: boolean) =>
      new LocalEventSourceMapping({
        sqs: lab.sqs(),
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
        invocation.records.filter((record) => record.group === group).map((record) => record.sequenceNumber),
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

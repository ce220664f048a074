import { type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { deleteRecords } from '@sqs-delivery-semantics/consumer-cores/delete-records';
import type { SQSRecord } from 'aws-lambda';
import { redriveCountOf } from '../../../contract/message.js';
import { FIFO_MAX_BATCH_SIZE } from '../../../contract/topology.js';
import { faultDraw, faultHits } from '../faults/faults.js';
import { INIT_TIMEOUT, InitError } from './execution-environment.js';
import type { FunctionInvokeOptions, LocalFunction } from './local-function.js';
import { faultKeyOf, receiveCountOf, recordsToDelete, toSqsEvent, toSqsRecord } from './sqs-event.js';
import { RoundRecorder, TimelineRecorder } from './timeline.js';

/** Lambda's synchronous invocation payload limit: a batch never carries more body bytes. */
export const MAX_BATCH_PAYLOAD_BYTES = 6 * 1024 * 1024;

/**
 * Faults the mapping injects (docs/design.md, "Fault model"), each drawn from the seed and keyed on the
 * event, its receive count and its redrive count, so every mode gets the same schedule. All rates
 * default to 0.
 */
export interface MappingFaults {
  readonly seed: string;
  /**
   * Probability, per record of a successful invocation, that the mapping hands it to the function
   * a second time (AWS: the ESM "processes each event at least once"; SQS "may return a message
   * after it was deleted"). A second copy is never drawn again.
   */
  readonly redeliveryRate?: number;
  /** Probability, per invocation, that its environment is SIGKILLed at a random moment of it. */
  readonly killRate?: number;
  /** Time a slow invocation spends in its environment before the handler runs, in ms. */
  readonly workDelayMs?: number;
  /** Probability, per invocation, that it is slow by workDelayMs. */
  readonly workDelayRate?: number;
}

export interface EventSourceMappingOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  readonly fn: LocalFunction;
  readonly batchSize: number;
  /** How long to keep gathering records after the first one arrives (0: invoke with one receive). */
  readonly maxBatchingWindowMs: number;
  /** Batches in flight at once (the ESM's maximum concurrency). */
  readonly maxConcurrency: number;
  readonly reportBatchItemFailures: boolean;
  /**
   * Whether the queue is a FIFO queue. Lambda then allows at most 10 records per batch and no
   * batching window (refused here, as the CreateEventSourceMapping API refuses them). The order
   * rules are SQS's: a receive returns a group's messages in order and holds the group back while
   * any is in flight, so its retries come before its later messages; the handler stops a group
   * at its first failure (docs/ordering.md).
   * @default false
   */
  readonly fifo?: boolean;
  /** Long-poll wait per ReceiveMessage; short locally so stop() returns quickly. */
  readonly waitTimeSeconds?: number;
  /**
   * The queue's visibility timeout: a batch that finishes (invocation and delete) later than its
   * receive time plus this counts as a visibility overrun. Default: overruns are not counted.
   */
  readonly visibilityTimeoutMs?: number;
  /** Injected faults. Default: none. */
  readonly faults?: MappingFaults;
  /** Called when an environment cannot initialise, or SQS returns a record Lambda could not build. */
  readonly onFatal: (error: Error) => void;
}

export interface MappingStats {
  /** Records handed to the function (second copies included). */
  deliveries: number;
  /**
   * Records the mapping holds, from their receive until their batch has finished: in invocations,
   * in batches being gathered, and second copies waiting to be handed over. A drain is not
   * complete while this is above 0.
   */
  inFlight: number;
  /** Records whose delete SQS accepted after an invocation (a second copy's stale delete included). */
  acknowledged: number;
  /** Invocations whose batch failed whole (error, timeout, process death, invalid response). */
  failedBatches: number;
  /** The most batches that were ever in flight at once (never above maxConcurrency). */
  peakBatchesInFlight: number;
  /** Batches that finished (invocation and delete) after their receive time + visibility timeout. */
  visibilityOverruns: number;
  /** Records the mapping decided to hand to the function a second time (redeliveryRate). */
  redelivered: number;
  /** Of those, the ones not handed over yet (also counted in inFlight). */
  pendingRedeliveries: number;
  /** Invocations made slow by workDelayMs (workDelayRate). */
  slowInvocations: number;
}

/** A batch being gathered or invoked. */
interface Batch {
  readonly records: SQSRecord[];
  /** performance.now() when its first record was received: the batching window and overruns count from it. */
  receivedAt: number;
  bytes: number;
  /** Whether its invocation failed whole: nothing of it was deleted. */
  failed?: boolean;
}

/**
 * A local Lambda SQS event source mapping: `maxConcurrency` pollers, each long-polling for up to
 * `batchSize` records (gathering more until the batching window, counted from the first record,
 * ends), invoking the function with the standard SQSEvent, and deleting what Lambda would delete
 * afterwards. On an error, a timeout or the death of the environment it deletes nothing: SQS makes
 * the records visible again when their visibility timeout expires.
 */
export class LocalEventSourceMapping {
  readonly stats: MappingStats = {
    deliveries: 0,
    inFlight: 0,
    acknowledged: 0,
    failedBatches: 0,
    peakBatchesInFlight: 0,
    visibilityOverruns: 0,
    redelivered: 0,
    pendingRedeliveries: 0,
    slowInvocations: 0,
  };
  /** Deliveries, acknowledgements and failed batches over time, for the report. */
  readonly timeline = new TimelineRecorder();
  /** Deliveries per receive count and when each count's last batch was done, for the drain's rounds. */
  readonly rounds = new RoundRecorder();
  private batchesInFlight = 0;
  private running = false;
  private pollers: Promise<void>[] = [];
  /** Aborts the pollers' ReceiveMessage calls when the mapping stops. */
  private receives = new AbortController();
  /** Second copies waiting for a batch, oldest first. */
  private readonly copies: SQSRecord[] = [];
  /** Records received beyond a batch's payload limit: they open the next batch. */
  private readonly overflow: SQSRecord[] = [];
  /** Marks second copies, which are never drawn for redelivery again. */
  private readonly isCopy = new WeakSet<SQSRecord>();

  constructor(private readonly options: EventSourceMappingOptions) {
    if (options.fifo && (options.batchSize > FIFO_MAX_BATCH_SIZE || options.maxBatchingWindowMs > 0)) {
      throw new RangeError(
        `a FIFO event source takes at most ${FIFO_MAX_BATCH_SIZE} records per batch and no batching window ` +
          `(got batch size ${options.batchSize}, window ${options.maxBatchingWindowMs} ms), as Lambda requires`,
      );
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.receives = new AbortController();
    this.pollers = Array.from({ length: this.options.maxConcurrency }, () => this.poll());
  }

  /**
   * Stops polling and waits for batches in flight to finish. Second copies not handed over yet stay
   * pending (and in inFlight); start() hands them over. A long poll waiting for messages is cut
   * short rather than waited out; a message SQS hands it in the meantime is hidden for one
   * visibility timeout, as for any receive whose client went away.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.receives.abort();
    await Promise.all(this.pollers);
  }

  private async poll(): Promise<void> {
    while (this.running) {
      try {
        const batch = await this.gather();
        if (batch.records.length > 0) await this.process(batch);
      } catch {
        if (!this.running) return;
        // SQS hiccups are retried the way the real poller does: back off, poll again.
        await sleep(200);
      }
    }
  }

  /** Held records first (overflow, then second copies), then SQS, within the batch's limits. */
  private async gather(): Promise<Batch> {
    const overflow = this.overflow.splice(0, this.options.batchSize);
    const copies = this.copies.splice(0, this.options.batchSize - overflow.length);
    this.stats.pendingRedeliveries -= copies.length;
    const batch: Batch = { records: [], receivedAt: performance.now(), bytes: 0 };
    this.add(batch, [...overflow, ...copies]);
    try {
      await this.receiveInto(batch);
    } catch (error) {
      // Records already gathered are invoked rather than dropped; an empty batch retries.
      if (batch.records.length === 0) throw error;
    }
    return batch;
  }

  /**
   * With a batching window, keeps receiving until the window (from the first record) ends, the
   * batch is full or its payload reaches the limit. Without one, a single receive, as before.
   */
  private async receiveInto(batch: Batch): Promise<void> {
    const { batchSize, maxBatchingWindowMs } = this.options;
    const longPollSeconds = this.options.waitTimeSeconds ?? 1;
    for (let first = true; this.running && !this.isFull(batch); first = false) {
      const windowLeftMs = batch.receivedAt + maxBatchingWindowMs - performance.now();
      if (!first && (batch.records.length === 0 || windowLeftMs <= 0)) return;
      const waitSeconds =
        batch.records.length === 0
          ? longPollSeconds
          : Math.max(0, Math.min(longPollSeconds, Math.floor(windowLeftMs / 1000)));
      const messages = await this.receive(Math.min(10, batchSize - batch.records.length), waitSeconds);
      const records = this.toRecords(messages);
      // Counted from the receive on: SQS no longer shows them, so until they are invoked and
      // deleted, only this count tells a drain that they are not done.
      this.stats.inFlight += records.length;
      if (batch.records.length === 0 && records.length > 0) batch.receivedAt = performance.now();
      this.add(batch, records);
      if (maxBatchingWindowMs <= 0) return;
      // Under a second of window left, long polling cannot wait less than a second: poll briefly.
      if (messages.length === 0 && waitSeconds === 0) await sleep(Math.min(50, Math.max(0, windowLeftMs)));
    }
  }

  private isFull(batch: Batch): boolean {
    return batch.records.length >= this.options.batchSize || batch.bytes >= MAX_BATCH_PAYLOAD_BYTES;
  }

  /** Adds records up to the payload limit; the rest opens the next batch. */
  private add(batch: Batch, records: readonly SQSRecord[]): void {
    for (const [index, record] of records.entries()) {
      // The limit is on the invocation payload: the record as Lambda serializes it, not just the body.
      const bytes = Buffer.byteLength(JSON.stringify(record));
      if (batch.records.length > 0 && batch.bytes + bytes > MAX_BATCH_PAYLOAD_BYTES) {
        this.overflow.push(...records.slice(index));
        batch.bytes = MAX_BATCH_PAYLOAD_BYTES;
        return;
      }
      batch.records.push(record);
      batch.bytes += bytes;
    }
  }

  private failedBatch(batch: Batch): void {
    batch.failed = true;
    this.stats.failedBatches += 1;
    this.timeline.record('failedBatches', 1);
  }

  private async receive(maxMessages: number, waitSeconds: number): Promise<Message[]> {
    const { Messages = [] } = await this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: maxMessages,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: this.receives.signal },
    );
    return Messages;
  }

  /** A message Lambda could not build a record from is a bug in the receive, not a hiccup to retry. */
  private toRecords(messages: readonly Message[]): SQSRecord[] {
    const { queueArn, region } = this.options;
    try {
      return messages.map((message) => toSqsRecord(message, queueArn, region));
    } catch (error) {
      this.options.onFatal(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  }

  private async process(batch: Batch): Promise<void> {
    const { fn, reportBatchItemFailures } = this.options;
    const { records } = batch;
    this.stats.deliveries += records.length;
    this.timeline.record('deliveries', records.length);
    this.batchesInFlight += 1;
    this.stats.peakBatchesInFlight = Math.max(this.stats.peakBatchesInFlight, this.batchesInFlight);
    try {
      let result: Awaited<ReturnType<LocalFunction['invoke']>>;
      try {
        result = await fn.invoke(toSqsEvent(records), this.invocationFaults(records));
      } catch (error) {
        // Nothing is deleted, as for any failed invocation. Only a module scope that throws is a
        // bug no retry will fix; a slow init (a loaded machine) or a stop in progress is not.
        this.failedBatch(batch);
        if (this.running && error instanceof InitError && error.error.name !== INIT_TIMEOUT) {
          this.options.onFatal(error);
        }
        return;
      }
      if (result.status === 'error') {
        this.failedBatch(batch);
        return;
      }
      const outcome = recordsToDelete(records, result.response, reportBatchItemFailures);
      if (outcome.failedWholeBatch) this.failedBatch(batch);
      await this.delete(outcome.delete);
      this.redeliver(outcome.delete);
    } finally {
      this.countOverrun(batch);
      this.rounds.batchDone(records.map(roundOf), {
        // One clock, the wall clock, for the receive and the end: the drain's start is read from it.
        receivedAtMs: Date.now() - (performance.now() - batch.receivedAt),
        failed: batch.failed === true,
      });
      this.stats.inFlight -= records.length;
      this.batchesInFlight -= 1;
    }
  }

  /** The per-invocation faults, drawn on the batch's first record. */
  private invocationFaults(records: readonly SQSRecord[]): FunctionInvokeOptions {
    const faults = this.options.faults;
    const first = records[0];
    if (!faults || !first) return {};
    const key = faultKeyOf(first);
    const n = receiveCountOf(first);
    const r = this.redriveCount(first);
    const kill = faultHits(faults.killRate ?? 0, faults.seed, 'kill', key, n, r);
    const slow =
      (faults.workDelayMs ?? 0) > 0 && faultHits(faults.workDelayRate ?? 0, faults.seed, 'slow', key, n, r);
    if (slow) this.stats.slowInvocations += 1;
    return {
      ...(kill ? { killAtFraction: faultDraw(faults.seed, 'kill-at', key, n, r) } : {}),
      // The invocation's timeout grows by the delay, so it can outlive its messages' visibility.
      // On AWS the function timeout must not exceed the visibility timeout, yet an invocation
      // still outlives its messages' visibility: their clock starts at the receive, before the
      // batching window, throttled-invoke retries and the init.
      ...(slow ? { workDelayMs: faults.workDelayMs } : {}),
    };
  }

  /**
   * Queues a second copy of each drawn record, as SQS hands back a message it already deleted:
   * same id, body and attributes, the now stale receipt handle, the receive count one higher.
   */
  private redeliver(deleted: readonly SQSRecord[]): void {
    const faults = this.options.faults;
    if (!faults?.redeliveryRate) return;
    for (const record of deleted) {
      if (this.isCopy.has(record)) continue;
      const n = receiveCountOf(record);
      const r = this.redriveCount(record);
      if (!faultHits(faults.redeliveryRate, faults.seed, 'redelivery', faultKeyOf(record), n, r)) continue;
      const copy: SQSRecord = {
        ...record,
        attributes: { ...record.attributes, ApproximateReceiveCount: String(n + 1) },
      };
      this.isCopy.add(copy);
      this.copies.push(copy);
      this.stats.redelivered += 1;
      this.stats.pendingRedeliveries += 1;
      // Counted before the batch leaves inFlight, so a drain never sees a gap between the two.
      this.stats.inFlight += 1;
    }
  }

  /**
   * The record's redrive count, part of every fault draw so a redriven copy (receive count started
   * over) draws afresh. Malformed, it is a bug of whoever sent it: fatal for the run, drawn as 0.
   */
  private redriveCount(record: SQSRecord): number {
    try {
      return redriveCountOf(record);
    } catch (error) {
      this.options.onFatal(error instanceof Error ? error : new Error(String(error)));
      return 0;
    }
  }

  private countOverrun(batch: Batch): void {
    const visibilityMs = this.options.visibilityTimeoutMs;
    if (visibilityMs !== undefined && performance.now() > batch.receivedAt + visibilityMs) {
      this.stats.visibilityOverruns += 1;
    }
  }

  private async delete(records: readonly SQSRecord[]): Promise<void> {
    const { deleted } = await deleteRecords(this.options.sqs, this.options.queueUrl, records);
    this.stats.acknowledged += deleted.length;
    this.timeline.record('acknowledged', deleted.length);
  }
}

/** The record's receive count; 0 for one without a valid one (refused as fatal where it is drawn on). */
function roundOf(record: SQSRecord): number {
  try {
    return receiveCountOf(record);
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

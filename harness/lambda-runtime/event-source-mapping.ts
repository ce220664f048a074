import { type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { deleteRecords } from '../../functions/shared/delete-records.js';
import { INIT_TIMEOUT, InitError } from './execution-environment.js';
import type { LocalFunction } from './local-function.js';
import { recordsToDelete, toSqsEvent, toSqsRecord } from './sqs-event.js';

export interface EventSourceMappingOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  readonly fn: LocalFunction;
  readonly batchSize: number;
  readonly maxBatchingWindowMs: number;
  /** Batches in flight at once (the ESM's maximum concurrency). */
  readonly maxConcurrency: number;
  readonly reportBatchItemFailures: boolean;
  /** Long-poll wait per ReceiveMessage; short locally so stop() returns quickly. */
  readonly waitTimeSeconds?: number;
  /** Called when an environment cannot initialise: a configuration bug no retry will fix. */
  readonly onFatal: (error: Error) => void;
}

export interface MappingStats {
  /** Records handed to the function. */
  deliveries: number;
  /** Records in invocations that have not finished yet. */
  inFlight: number;
  /** Records deleted after an invocation. */
  acknowledged: number;
  /** Invocations whose batch failed whole (error, timeout, process death, invalid response). */
  failedBatches: number;
  /** The most batches that were ever in flight at once (never above maxConcurrency). */
  peakBatchesInFlight: number;
}

/**
 * A local Lambda SQS event source mapping: `maxConcurrency` pollers, each long-polling for up to
 * `batchSize` records (waiting up to the batching window for a fuller batch), invoking the
 * function with the standard SQSEvent, and deleting what Lambda would delete afterwards. On an
 * error, a timeout or the death of the environment it deletes nothing: SQS makes the records
 * visible again when their visibility timeout expires.
 */
export class LocalEventSourceMapping {
  readonly stats: MappingStats = {
    deliveries: 0,
    inFlight: 0,
    acknowledged: 0,
    failedBatches: 0,
    peakBatchesInFlight: 0,
  };
  private batchesInFlight = 0;
  private running = false;
  private pollers: Promise<void>[] = [];

  constructor(private readonly options: EventSourceMappingOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.pollers = Array.from({ length: this.options.maxConcurrency }, () => this.poll());
  }

  /** Stops polling and waits for batches in flight to finish. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.pollers);
  }

  private async poll(): Promise<void> {
    while (this.running) {
      try {
        const records = await this.receiveBatch();
        if (records.length > 0) await this.process(records);
      } catch {
        if (!this.running) return;
        // SQS hiccups are retried the way the real poller does: back off, poll again.
        await sleep(200);
      }
    }
  }

  private async receiveBatch(): Promise<SQSRecord[]> {
    const { sqs, queueUrl, queueArn, region, batchSize, maxBatchingWindowMs } = this.options;
    const records: SQSRecord[] = [];
    const windowEnds = Date.now() + maxBatchingWindowMs;
    do {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, batchSize - records.length),
          WaitTimeSeconds: records.length === 0 ? (this.options.waitTimeSeconds ?? 1) : 0,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      records.push(...Messages.map((message: Message) => toSqsRecord(message, queueArn, region)));
      if (Messages.length === 0 && records.length > 0) break;
    } while (this.running && records.length < batchSize && Date.now() < windowEnds);
    return records;
  }

  private async process(records: SQSRecord[]): Promise<void> {
    const { fn, reportBatchItemFailures } = this.options;
    this.stats.deliveries += records.length;
    this.stats.inFlight += records.length;
    this.batchesInFlight += 1;
    this.stats.peakBatchesInFlight = Math.max(this.stats.peakBatchesInFlight, this.batchesInFlight);
    try {
      let result: Awaited<ReturnType<LocalFunction['invoke']>>;
      try {
        result = await fn.invoke(toSqsEvent(records));
      } catch (error) {
        // Nothing is deleted, as for any failed invocation. Only a module scope that throws is a
        // bug no retry will fix; a slow init (a loaded machine) or a stop in progress is not.
        this.stats.failedBatches += 1;
        if (this.running && error instanceof InitError && error.error.name !== INIT_TIMEOUT) {
          this.options.onFatal(error);
        }
        return;
      }
      if (result.status === 'error') {
        this.stats.failedBatches += 1;
        return;
      }
      const outcome = recordsToDelete(records, result.response, reportBatchItemFailures);
      if (outcome.failedWholeBatch) this.stats.failedBatches += 1;
      await this.delete(outcome.delete);
    } finally {
      this.stats.inFlight -= records.length;
      this.batchesInFlight -= 1;
    }
  }

  private async delete(records: readonly SQSRecord[]): Promise<void> {
    const { deleted } = await deleteRecords(this.options.sqs, this.options.queueUrl, records);
    this.stats.acknowledged += deleted.length;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A local Lambda event source mapping for a DynamoDB stream (AWS::Lambda::EventSourceMapping whose
 * EventSourceArn is a table's StreamArn), as Lambda runs one: LocalStreamMapping (batches,
 * invocations, retries, discards), its options and its counters. Its base class, ./stream-polling.ts,
 * lists the shards and runs one worker per shard; ./stream-records.ts has the event and invocation
 * record shapes, the function's answer, what follows a failure and the stream reading helpers;
 * ./stream-filter.ts has the filter patterns.
 *
 * - https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html — Lambda polls each shard (a base
 *   rate of 4 times per second), invokes the function synchronously with a batch of records, in
 *   order per shard; the batching window gathers until the batch is full, the window ends or the
 *   payload reaches 6 MB; the event shape (Records[].eventID, eventName, eventVersion, eventSource,
 *   awsRegion, dynamodb{…}, eventSourceARN).
 * - https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html — on a function
 *   error Lambda retries until the records expire, exceed MaximumRecordAgeInSeconds or reach
 *   MaximumRetryAttempts; BisectBatchOnFunctionError splits a failed batch in two, and "splitting a
 *   batch does not count towards the retry quota"; when the measures fail Lambda discards the
 *   records, sends an invocation record (DDBStreamBatchInfo) to the on-failure destination and
 *   "continues processing batches from the stream".
 * - https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html —
 *   ReportBatchItemFailures: Lambda checkpoints before the lowest reported sequence number and
 *   retries from it; the response shapes that count as complete success and complete failure; with
 *   bisection on, a partial response bisects "at the returned sequence number".
 * - https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-params.html — the parameters' ranges.
 *
 * The mapping keeps one batch per shard in flight (ParallelizationFactor 1) and a shard's children
 * wait until it is read to its end (./stream-polling.ts). The checkpoint lives in memory: stop()
 * then start() resumes where it stopped; a new mapping starts at `startingPosition`.
 */
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { MAX_BATCH_PAYLOAD_BYTES } from '../../local-aws/lambda-runtime/event-source-mapping.js';
import { INIT_TIMEOUT, InitError } from '../../local-aws/lambda-runtime/execution-environment.js';
import type { LocalFunction } from '../../local-aws/lambda-runtime/local-function.js';
import { compileFilterPattern, type FilterPattern, passesFilters } from './stream-filter.js';
import { PERSISTENT_BACKOFF_MS, type PolledShard, ShardPoller } from './stream-polling.js';
import {
  afterFailure,
  describe,
  expiredPrefix,
  type FailureCondition,
  invocationRecord,
  type Outcome,
  outcomeOf,
  type PendingBatch,
  readShard,
  type ShardCursor,
  type StreamInvocationRecord,
  type StreamSource,
} from './stream-records.js';

export { compileFilterPattern, matchesFilter } from './stream-filter.js';
export { type FailureCondition, type StreamInvocationRecord, toEventRecord } from './stream-records.js';

/** How a LocalStreamMapping reads its stream, invokes its function and gives up on records. */
export interface StreamMappingOptions {
  /** Signed as the function's role, without lambda:SourceFunctionArn (the poller), pointed at the local gateway. */
  readonly streams: DynamoDBStreamsClient;
  /** The stream read: DescribeStream, GetShardIterator and GetRecords name it. */
  readonly streamArn: string;
  /**
   * The stream's ARN as the function sees it: the events' eventSourceARN and the invocation record's
   * DDBStreamBatchInfo.streamArn (the template's StreamArn, where DynamoDB Local's differs).
   * @default streamArn
   */
  readonly eventSourceArn?: string;
  /** The function; its spec's name (a LocalFunction has one) makes the ARN in the invocation record. */
  readonly fn: Pick<LocalFunction, 'invoke'> & { readonly spec?: { readonly name: string } };
  /** 1 to 10,000 records per invocation (services-ddb-params). */
  readonly batchSize: number;
  /** How long to keep gathering after a batch's first record, up to 300 s (0: what one read returns). */
  readonly maxBatchingWindowMs: number;
  /** Where shards that exist when the mapping starts are read from; shards that appear later are read from their start. */
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST';
  /**
   * Lambda's filter patterns (FilterCriteria.Filters[].Pattern), ORed; none: every record is sent.
   * Exact values only (strings, numbers, booleans, null) at any depth; any operator is refused.
   */
  readonly filterPatterns: readonly string[];
  readonly reportBatchItemFailures: boolean;
  readonly bisectOnError: boolean;
  /** Retries of a failed batch before it is discarded; -1: until the record expires. */
  readonly maximumRetryAttempts: number;
  /** Records older than this are discarded instead of being sent; -1: never. */
  readonly maximumRecordAgeSeconds: number;
  /**
   * The on-failure destination: the records discarded (as they were sent), the condition
   * (`RetryAttemptsExhausted` or `RecordAgeExceeded`) and Lambda's invocation record, which is what
   * Lambda sends to the destination. Until it resolves the shard does not move on (a rejection is
   * retried, and reported once through onFatal). Without it discarded records are dropped.
   */
  readonly onFailure?: (
    records: unknown[],
    reason: string,
    invocationRecord: StreamInvocationRecord,
  ) => Promise<void>;
  readonly region: string;
  readonly accountId: string;
  /** Called (once) when the stream cannot be read for a reason a retry will not fix, or a handler cannot initialise. */
  readonly onFatal: (error: Error) => void;
  /** The wait after an empty read. @default 250 (Lambda polls "at a base rate of 4 times per second") */
  readonly pollIntervalMs?: number;
  /** The clock record ages are measured with, in epoch ms. @default Date.now */
  readonly now?: () => number;
}

export interface StreamMappingStats {
  /** Invocations of the function, retries included. */
  invocations: number;
  /**
   * Records the mapping is done with (its checkpoint is past them): sent in a batch that succeeded,
   * filtered out, or discarded (with or without an on-failure destination).
   */
  records: number;
  /** Invocations that failed whole (error, timeout, crash, invalid response) or in part (batchItemFailures). */
  failedBatches: number;
  /** Records discarded to the on-failure destination. */
  sentToOnFailure: number;
  /** Records handed to the function, retries included. */
  deliveries: number;
  /** Records no filter matched (also counted in records). */
  filtered: number;
}

/** Lambda's limits on a DynamoDB stream mapping's parameters (services-ddb-params.html). */
const LIMITS = { maxBatchSize: 10_000, maxWindowMs: 300_000, maxRetries: 10_000, maxAgeSeconds: 604_800 };
const DEFAULT_POLL_INTERVAL_MS = 250;

interface ShardState extends ShardCursor, PolledShard {
  /** Records read and not yet in a batch, in order (filtered ones included). */
  readonly buffer: DynamoDBRecord[];
  /** Batches to invoke before reading on: retries and bisected halves, first first. */
  readonly pending: PendingBatch[];
}

export class LocalStreamMapping extends ShardPoller<ShardState> {
  readonly stats: StreamMappingStats = {
    invocations: 0,
    records: 0,
    failedBatches: 0,
    sentToOnFailure: 0,
    deliveries: 0,
    filtered: 0,
  };
  private readonly filters: readonly FilterPattern[];
  private readonly source: StreamSource;

  constructor(private readonly options: StreamMappingOptions) {
    super(options);
    const { batchSize, maxBatchingWindowMs, maximumRetryAttempts, maximumRecordAgeSeconds } = options;
    const refuse = (message: string) => {
      throw new RangeError(
        `stream mapping on ${options.streamArn}: ${message}, as CreateEventSourceMapping refuses`,
      );
    };
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > LIMITS.maxBatchSize)
      refuse(`BatchSize ${batchSize} is not within 1–${LIMITS.maxBatchSize}`);
    if (maxBatchingWindowMs < 0 || maxBatchingWindowMs > LIMITS.maxWindowMs)
      refuse(`MaximumBatchingWindowInSeconds ${maxBatchingWindowMs / 1000} is not within 0–300`);
    if (
      !Number.isInteger(maximumRetryAttempts) ||
      maximumRetryAttempts < -1 ||
      maximumRetryAttempts > LIMITS.maxRetries
    )
      refuse(`MaximumRetryAttempts ${maximumRetryAttempts} is not -1 or within 0–${LIMITS.maxRetries}`);
    if (
      maximumRecordAgeSeconds !== -1 &&
      !(maximumRecordAgeSeconds >= 60 && maximumRecordAgeSeconds <= LIMITS.maxAgeSeconds)
    )
      refuse(
        `MaximumRecordAgeInSeconds ${maximumRecordAgeSeconds} is not -1 or within 60–${LIMITS.maxAgeSeconds}`,
      );
    this.filters = options.filterPatterns.map(compileFilterPattern);
    const { streams, streamArn, region } = options;
    this.source = { streams, streamArn, eventSourceArn: options.eventSourceArn ?? streamArn, region };
  }

  private get functionArn(): string {
    const { region, accountId, fn } = this.options;
    return `arn:aws:lambda:${region}:${accountId}:function:${fn.spec?.name ?? 'local-function'}`;
  }

  protected newShard(
    shardId: string,
    parentShardId: string | undefined,
    initialPosition: 'TRIM_HORIZON' | 'LATEST',
  ): ShardState {
    return {
      shardId,
      parentShardId,
      initialPosition,
      iterator: undefined,
      lastReadSequence: undefined,
      buffer: [],
      pending: [],
      ended: false,
      done: false,
      staleReads: 0,
      worker: undefined,
    };
  }

  protected async work(shard: ShardState): Promise<void> {
    while (this.running && !shard.done) {
      try {
        const retry = shard.pending.shift();
        if (retry) {
          await this.process(shard, retry);
          continue;
        }
        const records = await this.gather(shard);
        if (!this.running) {
          shard.buffer.unshift(...records);
          return;
        }
        if (records.length > 0) {
          await this.process(shard, { records, failures: 0, invokes: 0 });
        } else if (shard.ended && shard.buffer.length === 0) {
          shard.done = true;
        } else {
          await this.sleep(this.options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
        }
      } catch (error) {
        await this.sleep(this.trouble(error));
      }
    }
  }

  /**
   * The next batch: up to batchSize records that pass the filters, under the payload limit. With a
   * batching window it keeps reading until the window (from the batch's first record) ends; without
   * one it reads at most once. Records no filter matches are skipped and counted as processed.
   */
  private async gather(shard: ShardState): Promise<DynamoDBRecord[]> {
    const { batchSize, maxBatchingWindowMs: window } = this.options;
    const batch: DynamoDBRecord[] = [];
    let bytes = 0;
    let firstAt = 0;
    let full = false;
    let reads = 0;
    for (;;) {
      while (!full && batch.length < batchSize) {
        const record = shard.buffer[0];
        if (record === undefined) break;
        if (!passesFilters(this.filters, record)) {
          shard.buffer.shift();
          this.stats.filtered += 1;
          this.stats.records += 1;
          continue;
        }
        const size = Buffer.byteLength(JSON.stringify(record));
        if (batch.length > 0 && bytes + size > MAX_BATCH_PAYLOAD_BYTES) {
          full = true;
          break;
        }
        shard.buffer.shift();
        if (batch.length === 0) firstAt = performance.now();
        batch.push(record);
        bytes += size;
      }
      if (full || batch.length >= batchSize || !this.running) return batch;
      if (shard.ended && shard.buffer.length === 0) return batch;
      if (batch.length > 0 && (window <= 0 ? reads > 0 : performance.now() - firstAt >= window)) return batch;
      let read: number;
      try {
        read = await this.read(shard);
      } catch (error) {
        // What was gathered is read again next time, in the same order.
        shard.buffer.unshift(...batch);
        throw error;
      }
      reads += 1;
      if (read === 0 && batch.length === 0) return batch;
      if (read === 0 && window > 0) {
        const left = firstAt + window - performance.now();
        await this.sleep(Math.min(this.options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, left));
      }
    }
  }

  /** One GetRecords into the shard's buffer; returns how many records it read. */
  private async read(shard: ShardState): Promise<number> {
    const records = await readShard(this.source, shard);
    shard.buffer.push(...records);
    return records.length;
  }

  /**
   * Invokes one batch and decides what follows: the checkpoint moves past what succeeded; a failed
   * batch is retried (bisected first if asked) until its retries or its records' age run out, then
   * discarded to the on-failure destination. Nothing after a failing batch is read into a batch
   * until it is resolved: the shard never moves past it.
   */
  private async process(shard: ShardState, batch: PendingBatch): Promise<void> {
    const expired = expiredPrefix(batch.records, this.options.maximumRecordAgeSeconds, this.now());
    if (expired > 0) {
      // services-dynamodb-errors.html: records past MaximumRecordAgeInSeconds are discarded, not sent.
      await this.discard(shard, { ...batch, records: batch.records.slice(0, expired) }, 'RecordAgeExceeded');
      if (expired === batch.records.length) return;
      batch = { ...batch, records: batch.records.slice(expired) };
    }
    const { records } = batch;
    this.stats.invocations += 1;
    this.stats.deliveries += records.length;
    const invokes = batch.invokes + 1;
    const event: DynamoDBStreamEvent = { Records: records };
    let outcome: Outcome;
    try {
      outcome = outcomeOf(await this.options.fn.invoke(event), records, this.options.reportBatchItemFailures);
    } catch (error) {
      // Nothing is checkpointed, as for any failed invocation. Only a module scope that throws is a
      // bug no retry fixes; a slow init or a stop in progress is not.
      outcome = { kind: 'failure', functionError: true };
      if (this.running && error instanceof InitError && error.error.name !== INIT_TIMEOUT) {
        this.reportFatal(error);
      }
    }
    if (outcome.kind === 'success') {
      this.stats.records += records.length;
      return;
    }
    this.stats.failedBatches += 1;
    const next = afterFailure(outcome, batch, invokes, this.options.bisectOnError);
    this.stats.records += next.done;
    if ('halves' in next) shard.pending.unshift(...next.halves);
    else await this.retryOrDiscard(shard, next.retry);
  }

  /** MaximumRetryAttempts N: the first invocation and N retries, then the records are discarded. */
  private async retryOrDiscard(shard: ShardState, batch: PendingBatch): Promise<void> {
    const max = this.options.maximumRetryAttempts;
    if (max >= 0 && batch.failures > max) await this.discard(shard, batch, 'RetryAttemptsExhausted');
    else shard.pending.unshift(batch);
  }

  /**
   * Hands the records to the on-failure destination with Lambda's invocation record, then moves on.
   * A destination that fails is retried (after a backoff) while the mapping runs.
   */
  private async discard(shard: ShardState, batch: PendingBatch, condition: FailureCondition): Promise<void> {
    const { onFailure } = this.options;
    if (onFailure) {
      const record = invocationRecord(shard.shardId, batch, condition, {
        functionArn: this.functionArn,
        streamArn: this.source.eventSourceArn,
        now: () => this.now(),
      });
      for (;;) {
        try {
          await onFailure([...batch.records], condition, record);
          break;
        } catch (error) {
          this.reportFatal(
            new Error(
              `stream mapping on ${this.options.streamArn}: the on-failure destination refused ${batch.records.length} records: ${describe(error)}`,
            ),
          );
          if (!this.running) return;
          await this.sleep(PERSISTENT_BACKOFF_MS);
        }
      }
      this.stats.sentToOnFailure += batch.records.length;
    }
    this.stats.records += batch.records.length;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

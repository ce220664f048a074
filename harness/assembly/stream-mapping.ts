import { randomUUID } from 'node:crypto';
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type AttributeValue as SdkAttributeValue,
  type _Record as SdkStreamRecord,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue, DynamoDBRecord, DynamoDBStreamEvent, StreamRecord } from 'aws-lambda';
import { MAX_BATCH_PAYLOAD_BYTES } from '../lambda-runtime/event-source-mapping.js';
import { INIT_TIMEOUT, InitError, type InvocationResult } from '../lambda-runtime/execution-environment.js';
import type { LocalFunction } from '../lambda-runtime/local-function.js';

/**
 * A local Lambda event source mapping for a DynamoDB stream (AWS::Lambda::EventSourceMapping whose
 * EventSourceArn is a table's StreamArn), as Lambda runs one:
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
 * - https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html and
 *   https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html — filters are ORed, a
 *   record must contain every field a filter names, a record no filter matches is not sent and the
 *   iterator advances past it.
 * - https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-params.html — the parameters' ranges.
 *
 * The mapping keeps one batch per shard in flight (ParallelizationFactor 1) and a shard's children
 * wait until it is read to its end, as harness/outbox/stream-relay.ts does for the embedded relay.
 * The checkpoint lives in memory: stop() then start() resumes where it stopped; a new mapping
 * starts at `startingPosition`.
 */
export interface StreamMappingOptions {
  /** Signed as the function's role, without lambda:SourceFunctionArn (the poller), pointed at the local gateway. */
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
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

/** What Lambda sends to a stream mapping's on-failure destination (services-dynamodb-errors.html, "Invocation record"). */
export interface StreamInvocationRecord {
  readonly requestContext: {
    readonly requestId: string;
    readonly functionArn: string;
    readonly condition: FailureCondition;
    readonly approximateInvokeCount: number;
  };
  /** The last invocation's outcome; absent when the records expired before any invocation. */
  readonly responseContext?: {
    readonly statusCode: number;
    readonly executedVersion: string;
    readonly functionError?: string;
  };
  readonly version: '1.0';
  readonly timestamp: string;
  readonly DDBStreamBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string;
    readonly endSequenceNumber: string;
    readonly approximateArrivalOfFirstRecord?: string;
    readonly approximateArrivalOfLastRecord?: string;
    readonly batchSize: number;
    readonly streamArn: string;
  };
}

/**
 * AWS's documentation shows `RetryAttemptsExhausted` only; `RecordAgeExceeded` is the value
 * LocalStack's stream poller sends for an expired record (not confirmed against AWS).
 */
export type FailureCondition = 'RetryAttemptsExhausted' | 'RecordAgeExceeded';

/** Lambda's limits on a DynamoDB stream mapping's parameters (services-ddb-params.html). */
const LIMITS = { maxBatchSize: 10_000, maxWindowMs: 300_000, maxRetries: 10_000, maxAgeSeconds: 604_800 };
const DEFAULT_POLL_INTERVAL_MS = 250;
/** How often the shard list is read again (shards split every few hours on AWS). */
const SHARD_REFRESH_MS = 1_000;
/** GetRecords returns at most 1,000 records. */
const GET_RECORDS_LIMIT = 1_000;
/** Waits after a failed read: a hiccup, and a failure a retry will likely not fix. */
const TRANSIENT_BACKOFF_MS = 200;
const PERSISTENT_BACKOFF_MS = 1_000;
/** Stale iterators tolerated in a row per shard (see isStaleIterator). */
const MAX_STALE_READS = 5;

/** A batch waiting to be (re)invoked, in shard order. */
interface PendingBatch {
  readonly records: DynamoDBRecord[];
  /** Failed invocations counted against MaximumRetryAttempts (a bisection does not count). */
  readonly failures: number;
  /** Invocations of this batch and of the batches it was cut from (approximateInvokeCount). */
  readonly invokes: number;
  readonly lastResponse?: StreamInvocationRecord['responseContext'];
}

interface ShardState {
  readonly shardId: string;
  readonly parentShardId: string | undefined;
  /** Where the shard is first read from when nothing of it has been read. */
  readonly initialPosition: 'TRIM_HORIZON' | 'LATEST';
  iterator: string | undefined;
  /** The last record read from the shard (buffered or processed): a new iterator starts after it. */
  lastReadSequence: string | undefined;
  /** Records read and not yet in a batch, in order (filtered ones included). */
  readonly buffer: DynamoDBRecord[];
  /** Batches to invoke before reading on: retries and bisected halves, first first. */
  readonly pending: PendingBatch[];
  /** The shard is closed and read to its end. */
  ended: boolean;
  /** Ended, and every record of it processed. */
  done: boolean;
  staleReads: number;
  worker: Promise<void> | undefined;
}

type Outcome =
  | { readonly kind: 'success' }
  | { readonly kind: 'partial'; readonly from: number }
  | { readonly kind: 'failure'; readonly functionError: boolean };

export class LocalStreamMapping {
  readonly stats: StreamMappingStats = {
    invocations: 0,
    records: 0,
    failedBatches: 0,
    sentToOnFailure: 0,
    deliveries: 0,
    filtered: 0,
  };
  private readonly filters: readonly FilterPattern[];
  private readonly shards = new Map<string, ShardState>();
  private readonly wakers = new Set<() => void>();
  private running = false;
  private listedOnce = false;
  private discovery: Promise<void> | undefined;
  private fatalReported = false;

  constructor(private readonly options: StreamMappingOptions) {
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
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.discovery = this.discover();
  }

  /**
   * Stops polling and waits for the invocations in flight (and their retry decision) to finish.
   * Waits (poll interval, batching window, backoff) end at once; a batch being gathered goes back
   * to the shard's buffer, and start() resumes from the same place.
   */
  async stop(): Promise<void> {
    this.running = false;
    for (const wake of [...this.wakers]) wake();
    await this.discovery;
    await Promise.all([...this.shards.values()].map((shard) => shard.worker));
  }

  private get functionArn(): string {
    const { region, accountId, fn } = this.options;
    return `arn:aws:lambda:${region}:${accountId}:function:${fn.spec?.name ?? 'local-function'}`;
  }

  /** Reads the shard list every SHARD_REFRESH_MS and starts a worker on each shard that may be read. */
  private async discover(): Promise<void> {
    while (this.running) {
      let wait = SHARD_REFRESH_MS;
      try {
        const shards = await listShards(this.options.streams, this.options.streamArn);
        for (const shard of shards) {
          if (shard.ShardId === undefined || this.shards.has(shard.ShardId)) continue;
          this.shards.set(shard.ShardId, {
            shardId: shard.ShardId,
            parentShardId: shard.ParentShardId,
            // A shard that appears while the mapping runs holds only records written since: from its start.
            initialPosition: this.listedOnce ? 'TRIM_HORIZON' : this.options.startingPosition,
            iterator: undefined,
            lastReadSequence: undefined,
            buffer: [],
            pending: [],
            ended: false,
            done: false,
            staleReads: 0,
            worker: undefined,
          });
        }
        this.listedOnce = true;
        this.startWorkers();
      } catch (error) {
        wait = this.trouble(error);
      }
      await this.sleep(wait);
    }
  }

  /** One worker per readable shard; a child waits for its parent (if still listed) to be done. */
  private startWorkers(): void {
    if (!this.running) return;
    for (const shard of this.shards.values()) {
      if (shard.done || shard.worker) continue;
      const parent = shard.parentShardId === undefined ? undefined : this.shards.get(shard.parentShardId);
      if (parent && !parent.done) continue;
      shard.worker = this.work(shard).finally(() => {
        shard.worker = undefined;
        if (shard.done) this.startWorkers();
      });
    }
  }

  private async work(shard: ShardState): Promise<void> {
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
        if (!this.passes(record)) {
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
    const { streams, streamArn, region } = this.options;
    shard.iterator ??= await this.iteratorFor(shard);
    let page: { Records?: SdkStreamRecord[]; NextShardIterator?: string };
    try {
      page = await streams.send(
        new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: GET_RECORDS_LIMIT }),
      );
    } catch (error) {
      if (!isStaleIterator(error) || shard.staleReads >= MAX_STALE_READS) throw error;
      // A fresh iterator after the last record read: nothing is read twice or skipped.
      shard.staleReads += 1;
      shard.iterator = undefined;
      return 0;
    }
    shard.staleReads = 0;
    const records = (page.Records ?? []).map((record) => toEventRecord(record, streamArn, region));
    shard.buffer.push(...records);
    shard.lastReadSequence = records.at(-1)?.dynamodb?.SequenceNumber ?? shard.lastReadSequence;
    shard.iterator = page.NextShardIterator;
    if (page.NextShardIterator === undefined) shard.ended = true;
    return records.length;
  }

  private async iteratorFor(shard: ShardState): Promise<string> {
    const { ShardIterator } = await this.options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: this.options.streamArn,
        ShardId: shard.shardId,
        ...(shard.lastReadSequence === undefined
          ? { ShardIteratorType: shard.initialPosition }
          : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: shard.lastReadSequence }),
      }),
    );
    if (ShardIterator === undefined)
      throw new Error(`GetShardIterator returned no iterator for ${shard.shardId}`);
    return ShardIterator;
  }

  /**
   * Invokes one batch and decides what follows: the checkpoint moves past what succeeded; a failed
   * batch is retried (bisected first if asked) until its retries or its records' age run out, then
   * discarded to the on-failure destination. Nothing after a failing batch is read into a batch
   * until it is resolved: the shard never moves past it.
   */
  private async process(shard: ShardState, batch: PendingBatch): Promise<void> {
    const expired = this.expiredPrefix(batch.records);
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
    if (outcome.kind === 'partial') {
      // services-ddb-batchfailurereporting.html: checkpoint before the lowest reported sequence
      // number, retry from it (with bisection on, the batch is bisected there: the same records).
      this.stats.records += outcome.from;
      const rest = records.slice(outcome.from);
      await this.retryOrDiscard(shard, {
        records: rest,
        failures: batch.failures + 1,
        invokes,
        lastResponse: { statusCode: 200, executedVersion: '$LATEST' },
      });
      return;
    }
    const lastResponse = {
      statusCode: 200,
      executedVersion: '$LATEST',
      ...(outcome.functionError ? { functionError: 'Unhandled' } : {}),
    };
    if (this.options.bisectOnError && records.length > 1) {
      // Splitting does not count towards the retry quota (services-dynamodb-errors.html).
      const half = Math.ceil(records.length / 2);
      shard.pending.unshift(
        { records: records.slice(0, half), failures: batch.failures, invokes, lastResponse },
        { records: records.slice(half), failures: batch.failures, invokes, lastResponse },
      );
      return;
    }
    await this.retryOrDiscard(shard, { records, failures: batch.failures + 1, invokes, lastResponse });
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
      const record = this.invocationRecord(shard, batch, condition);
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

  private invocationRecord(
    shard: ShardState,
    batch: PendingBatch,
    condition: FailureCondition,
  ): StreamInvocationRecord {
    const first = batch.records[0]?.dynamodb;
    const last = batch.records.at(-1)?.dynamodb;
    const arrival = (seconds: number | undefined) =>
      seconds === undefined ? undefined : `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
    const firstArrival = arrival(first?.ApproximateCreationDateTime);
    const lastArrival = arrival(last?.ApproximateCreationDateTime);
    return {
      requestContext: {
        requestId: randomUUID(),
        functionArn: this.functionArn,
        condition,
        approximateInvokeCount: batch.invokes,
      },
      ...(batch.lastResponse ? { responseContext: batch.lastResponse } : {}),
      version: '1.0',
      timestamp: new Date(this.now()).toISOString(),
      DDBStreamBatchInfo: {
        shardId: shard.shardId,
        startSequenceNumber: first?.SequenceNumber ?? '',
        endSequenceNumber: last?.SequenceNumber ?? '',
        ...(firstArrival ? { approximateArrivalOfFirstRecord: firstArrival } : {}),
        ...(lastArrival ? { approximateArrivalOfLastRecord: lastArrival } : {}),
        batchSize: batch.records.length,
        streamArn: this.options.streamArn,
      },
    };
  }

  /** How many of the first records are older than MaximumRecordAgeInSeconds (records are in age order). */
  private expiredPrefix(records: readonly DynamoDBRecord[]): number {
    const maxAge = this.options.maximumRecordAgeSeconds;
    if (maxAge < 0) return 0;
    const nowSeconds = this.now() / 1000;
    const live = records.findIndex((record) => {
      const created = record.dynamodb?.ApproximateCreationDateTime;
      return created === undefined || nowSeconds - created <= maxAge;
    });
    return live === -1 ? records.length : live;
  }

  private passes(record: DynamoDBRecord): boolean {
    return this.filters.length === 0 || this.filters.some((filter) => matchesFilter(filter, record));
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The wait after a failed read; a failure a retry will not fix is reported once. */
  private trouble(error: unknown): number {
    if (isTransient(error)) return TRANSIENT_BACKOFF_MS;
    this.reportFatal(new Error(`stream mapping on ${this.options.streamArn}: ${describe(error)}`));
    return PERSISTENT_BACKOFF_MS;
  }

  private reportFatal(error: Error): void {
    if (this.fatalReported) return;
    this.fatalReported = true;
    this.options.onFatal(error);
  }

  /** A wait that stop() ends at once. */
  private sleep(ms: number): Promise<void> {
    if (!this.running || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }
}

/**
 * How Lambda reads the function's answer (services-ddb-batchfailurereporting.html, "Success and
 * failure conditions"): without ReportBatchItemFailures any answer is success; with it, a null or
 * empty answer or list is success, an itemIdentifier that is empty, null, or not a sequence
 * number of the batch fails the batch whole, and otherwise the lowest one is where it resumes.
 */
function outcomeOf(result: InvocationResult, records: readonly DynamoDBRecord[], report: boolean): Outcome {
  if (result.status === 'error') return { kind: 'failure', functionError: true };
  const response = result.response;
  if (!report || response === null || response === undefined) return { kind: 'success' };
  // A string, a number or a top-level array is not the JSON object Lambda reads.
  if (typeof response !== 'object' || Array.isArray(response))
    return { kind: 'failure', functionError: false };
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === null || failures === undefined) return { kind: 'success' };
  if (!Array.isArray(failures)) return { kind: 'failure', functionError: false };
  if (failures.length === 0) return { kind: 'success' };
  const positions = new Map(records.map((record, index) => [record.dynamodb?.SequenceNumber, index]));
  let from = Number.POSITIVE_INFINITY;
  for (const failure of failures as unknown[]) {
    const id =
      typeof failure === 'object' && failure !== null && 'itemIdentifier' in failure
        ? failure.itemIdentifier
        : undefined;
    const position = typeof id === 'string' && id !== '' ? positions.get(id) : undefined;
    if (position === undefined) return { kind: 'failure', functionError: false };
    from = Math.min(from, position);
  }
  return { kind: 'partial', from };
}

// ---------------------------------------------------------------------------------------------
// The event Lambda sends (with-ddb.html, "Example DynamoDB Streams record event"; the record's
// fields: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_Record.html).

/**
 * A GetRecords record as Lambda puts it in the event: ApproximateCreationDateTime in epoch seconds,
 * binary values in base64, eventSourceARN the stream's ARN, awsRegion the mapping's Region.
 */
export function toEventRecord(record: SdkStreamRecord, streamArn: string, region: string): DynamoDBRecord {
  const source = record.dynamodb;
  const sequenceNumber = source?.SequenceNumber;
  if (sequenceNumber === undefined) {
    throw new Error(`a stream record of ${streamArn} has no SequenceNumber (eventID ${record.eventID})`);
  }
  const created = source?.ApproximateCreationDateTime;
  const dynamodb: StreamRecord = {
    ...(created ? { ApproximateCreationDateTime: created.getTime() / 1000 } : {}),
    ...(source?.Keys ? { Keys: imageOf(source.Keys) } : {}),
    ...(source?.NewImage ? { NewImage: imageOf(source.NewImage) } : {}),
    ...(source?.OldImage ? { OldImage: imageOf(source.OldImage) } : {}),
    SequenceNumber: sequenceNumber,
    ...(source?.SizeBytes === undefined ? {} : { SizeBytes: source.SizeBytes }),
    ...(source?.StreamViewType ? { StreamViewType: source.StreamViewType } : {}),
  };
  return {
    ...(record.eventID === undefined ? {} : { eventID: record.eventID }),
    ...(record.eventName === undefined ? {} : { eventName: record.eventName }),
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    dynamodb,
    eventSourceARN: streamArn,
    // TTL deletions: Records[].userIdentity.type "Service", .principalId "dynamodb.amazonaws.com"
    // (API_streams_Record), where the Streams API (and the SDK) name them Type and PrincipalId.
    ...(record.userIdentity
      ? { userIdentity: { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId } }
      : {}),
  };
}

function imageOf(image: Record<string, SdkAttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, wireValueOf(value)]));
}

/** The SDK's AttributeValue (binary as bytes) as JSON carries it (binary as base64). */
function wireValueOf(value: SdkAttributeValue): AttributeValue {
  const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  if (value.B !== undefined) return { B: base64(value.B) };
  if (value.BS !== undefined) return { BS: value.BS.map(base64) };
  if (value.L !== undefined) return { L: value.L.map(wireValueOf) };
  if (value.M !== undefined) return { M: imageOf(value.M) };
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  throw new Error(`an attribute value of an unknown type: ${JSON.stringify(value.$unknown ?? value)}`);
}

// ---------------------------------------------------------------------------------------------
// Filters (invocation-eventfiltering.html): "For filter rules, Lambda supports the same set of
// syntax and rules as Amazon EventBridge." Only exact values are implemented.

type FilterValue = string | number | boolean | null;
interface FilterPattern {
  readonly [field: string]: FilterPattern | readonly FilterValue[];
}

/**
 * A filter pattern, checked as far as this mapping implements it: objects of fields, each an
 * object (a nested field) or an array of exact values. Any operator ({"prefix": …},
 * {"anything-but": …}, {"numeric": …}, {"exists": …}…) is refused in one line that names it.
 */
export function compileFilterPattern(pattern: string): FilterPattern {
  const refuse = (why: string): never => {
    throw new RangeError(`filter pattern ${pattern}: ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(pattern);
  } catch {
    return refuse('is not JSON (Lambda refuses it at CreateEventSourceMapping)');
  }
  const check = (node: unknown, path: string): FilterPattern => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      return refuse(`${path || 'the pattern'} must be an object of fields`);
    }
    for (const [field, rule] of Object.entries(node)) {
      const at = path ? `${path}.${field}` : field;
      if (Array.isArray(rule)) {
        if (rule.length === 0) refuse(`${at} has an empty array, which matches nothing`);
        for (const value of rule as unknown[]) {
          if (typeof value === 'object' && value !== null) {
            const operator = Object.keys(value)[0] ?? '{}';
            refuse(
              `${at} uses the "${operator}" operator, which the local stream mapping does not implement (only exact values)`,
            );
          }
        }
      } else if (typeof rule === 'object' && rule !== null) {
        check(rule, at);
      } else {
        refuse(`${at} must be an array of values or an object of fields, got ${JSON.stringify(rule)}`);
      }
    }
    return node as FilterPattern;
  };
  return check(parsed, '');
}

/**
 * EventBridge's matching of exact values: the record must hold every field the pattern names
 * ("the event must contain all the field names included in a filter"), and a field's value (or
 * one element, if it is an array) must equal one of the listed values, character for character.
 */
export function matchesFilter(pattern: FilterPattern, value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const fields = value as Record<string, unknown>;
  for (const [field, rule] of Object.entries(pattern)) {
    if (!Object.hasOwn(fields, field) || fields[field] === undefined) return false;
    const actual = fields[field];
    if (isValueList(rule)) {
      const candidates = Array.isArray(actual) ? actual : [actual];
      if (!candidates.some((candidate) => rule.some((allowed) => allowed === candidate))) return false;
    } else if (!matchesFilter(rule, actual)) {
      return false;
    }
  }
  return true;
}

function isValueList(rule: FilterPattern | readonly FilterValue[]): rule is readonly FilterValue[] {
  return Array.isArray(rule);
}

// ---------------------------------------------------------------------------------------------
// Reading the stream: the approach of harness/outbox/stream-relay.ts (DescribeStream pages, stale
// iterators taken again from the last record read), whose helpers are not exported.

async function listShards(streams: DynamoDBStreamsClient, streamArn: string): Promise<Shard[]> {
  const shards: Shard[] = [];
  let start: string | undefined;
  do {
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: streamArn, ...(start ? { ExclusiveStartShardId: start } : {}) }),
    );
    shards.push(...(StreamDescription?.Shards ?? []));
    start = StreamDescription?.LastEvaluatedShardId;
  } while (start !== undefined);
  return shards;
}

/**
 * Iterators expire after 15 minutes, and DynamoDB Local answers TrimmedDataAccessException to the
 * first GetRecords after the first write when the iterator was taken on an empty shard
 * (aws/aws-sdk-java#2923; see harness/outbox/stream-relay.ts). A fresh iterator reads on; bounded
 * per shard, so a real trim still fails, and says so.
 */
function isStaleIterator(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === 'ExpiredIteratorException' || name === 'TrimmedDataAccessException';
}

/** Throttling, a 5xx, or no HTTP answer at all (a socket error): the next poll will likely get through. */
function isTransient(error: unknown): boolean {
  const e = error as {
    name?: string;
    code?: unknown;
    $metadata?: { httpStatusCode?: number };
    $retryable?: unknown;
  };
  if (e?.$retryable) return true;
  const status = e?.$metadata?.httpStatusCode;
  if (status === undefined) {
    return e?.name === 'TimeoutError' || (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code));
  }
  if (status >= 500) return true;
  return ['ThrottlingException', 'LimitExceededException', 'RequestLimitExceeded'].includes(e.name ?? '');
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

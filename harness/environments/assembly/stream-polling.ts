/**
 * The polling half of a local DynamoDB stream mapping (harness/environments/assembly/stream-mapping.ts): the
 * shard list read every second, one worker per shard that may be read (a shard's children wait
 * until it is read to its end, as harness/run/outbox/stream-relay.ts does for the embedded relay),
 * waits that stop() ends at once, the backoff after a failed read and the one report of a failure
 * a retry will not fix (isTransient). What a worker does with a shard's records is the subclass's `work`.
 */
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { listShards } from '../../local-aws/dynamodb-streams.js';
import { describe } from './stream-records.js';

/** How often the shard list is read again (shards split every few hours on AWS). */
const SHARD_REFRESH_MS = 1_000;
/** Waits after a failed read: a hiccup, and a failure a retry will likely not fix. */
const TRANSIENT_BACKOFF_MS = 200;
export const PERSISTENT_BACKOFF_MS = 1_000;

/** What the poller keeps of a shard. */
export interface PolledShard {
  readonly shardId: string;
  readonly parentShardId: string | undefined;
  /** Ended, and every record of it processed. */
  done: boolean;
  worker: Promise<void> | undefined;
}

export interface ShardPollerOptions {
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
  /** Where shards that exist when polling starts are read from; shards that appear later are read from their start. */
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST';
  /** Called (once) when the stream cannot be read for a reason a retry will not fix, or a handler cannot initialise. */
  readonly onFatal: (error: Error) => void;
}

export abstract class ShardPoller<S extends PolledShard> {
  protected readonly shards = new Map<string, S>();
  private readonly wakers = new Set<() => void>();
  protected running = false;
  private listedOnce = false;
  private discovery: Promise<void> | undefined;
  private fatalReported = false;

  constructor(private readonly polling: ShardPollerOptions) {}

  /** The state of a shard first listed, read first from `initialPosition`. */
  protected abstract newShard(
    shardId: string,
    parentShardId: string | undefined,
    initialPosition: 'TRIM_HORIZON' | 'LATEST',
  ): S;

  /** Reads and processes the shard while running, until it is done. */
  protected abstract work(shard: S): Promise<void>;

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

  /** Reads the shard list every SHARD_REFRESH_MS and starts a worker on each shard that may be read. */
  private async discover(): Promise<void> {
    while (this.running) {
      let wait = SHARD_REFRESH_MS;
      try {
        const shards = await listShards(this.polling.streams, this.polling.streamArn);
        for (const shard of shards) {
          if (shard.ShardId === undefined || this.shards.has(shard.ShardId)) continue;
          this.shards.set(
            shard.ShardId,
            this.newShard(
              shard.ShardId,
              shard.ParentShardId,
              // A shard that appears while the mapping runs holds only records written since: from its start.
              this.listedOnce ? 'TRIM_HORIZON' : this.polling.startingPosition,
            ),
          );
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

  /** The wait after a failed read; a failure a retry will not fix is reported once. */
  protected trouble(error: unknown): number {
    if (isTransient(error)) return TRANSIENT_BACKOFF_MS;
    this.reportFatal(new Error(`stream mapping on ${this.polling.streamArn}: ${describe(error)}`));
    return PERSISTENT_BACKOFF_MS;
  }

  protected reportFatal(error: Error): void {
    if (this.fatalReported) return;
    this.fatalReported = true;
    this.polling.onFatal(error);
  }

  /** A wait that stop() ends at once. */
  protected sleep(ms: number): Promise<void> {
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

/** What the local event source mapping did over time, for the report's timeline per mode. */
export interface RuntimeTimeline {
  /** Epoch ms of the first bucket's start (the first record received). */
  readonly startMs: number;
  readonly bucketMs: number;
  readonly deliveries: readonly number[];
  readonly acknowledged: readonly number[];
  readonly failedBatches: readonly number[];
}

type Series = 'deliveries' | 'acknowledged' | 'failedBatches';

/** Counts per fixed-width time bucket, from the first thing recorded. */
export class TimelineRecorder {
  private startMs: number | undefined;
  private readonly series: Record<Series, number[]> = { deliveries: [], acknowledged: [], failedBatches: [] };

  constructor(private readonly bucketMs = 1000) {}

  record(series: Series, count: number, now: number = Date.now()): void {
    if (count === 0) return;
    this.startMs ??= now;
    const bucket = Math.max(0, Math.floor((now - this.startMs) / this.bucketMs));
    const values = this.series[series];
    while (values.length <= bucket) values.push(0);
    values[bucket] = (values[bucket] ?? 0) + count;
  }

  /** A copy, every series padded to the same length; undefined before anything happened. */
  snapshot(): RuntimeTimeline | undefined {
    if (this.startMs === undefined) return undefined;
    const length = Math.max(...Object.values(this.series).map((values) => values.length));
    const padded = (values: number[]) => [...values, ...new Array<number>(length - values.length).fill(0)];
    return {
      startMs: this.startMs,
      bucketMs: this.bucketMs,
      deliveries: padded(this.series.deliveries),
      acknowledged: padded(this.series.acknowledged),
      failedBatches: padded(this.series.failedBatches),
    };
  }
}

/**
 * The records handed over with one receive count: 1 for first deliveries, n for the nth delivery
 * of the same message. A drain's time is its rounds: the first ends when the last first
 * delivery is done; each later one a visibility timeout after the failures of the one before.
 */
export interface DeliveryRound {
  readonly receiveCount: number;
  /** Records handed to the function with this receive count. */
  readonly records: number;
  /** Batches holding one of them that failed whole (a crash, a timeout, an error). */
  readonly failedBatches: number;
  /** Epoch ms of the first receive of one of them. */
  readonly firstReceivedAtMs: number;
  /** Epoch ms at which the last batch holding one of them finished (invocation and delete). */
  readonly lastDoneAtMs: number;
}

/** Rounds as batches finish, keyed by the receive counts of their records. */
export class RoundRecorder {
  private readonly rounds = new Map<number, DeliveryRound>();

  batchDone(
    receiveCounts: readonly number[],
    batch: { readonly receivedAtMs: number; readonly failed: boolean },
    now: number = Date.now(),
  ): void {
    const records = new Map<number, number>();
    for (const n of receiveCounts) records.set(n, (records.get(n) ?? 0) + 1);
    for (const [receiveCount, count] of records) {
      const round = this.rounds.get(receiveCount);
      this.rounds.set(receiveCount, {
        receiveCount,
        records: (round?.records ?? 0) + count,
        failedBatches: (round?.failedBatches ?? 0) + (batch.failed ? 1 : 0),
        firstReceivedAtMs: Math.min(round?.firstReceivedAtMs ?? batch.receivedAtMs, batch.receivedAtMs),
        lastDoneAtMs: Math.max(round?.lastDoneAtMs ?? now, now),
      });
    }
  }

  /** In receive-count order. */
  snapshot(): DeliveryRound[] {
    return [...this.rounds.values()].sort((a, b) => a.receiveCount - b.receiveCount);
  }
}

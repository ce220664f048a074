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

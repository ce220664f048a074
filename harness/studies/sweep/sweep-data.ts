import type { Mode } from '../../../contract/topology.js';
import type { ExperimentReport } from '../../run/experiment.js';

/** One run of the sweep, reduced to what the trade-off is about, per 1,000 messages. */
export interface SweepPoint {
  readonly mode: Mode;
  readonly batchSize: number;
  readonly crashRate: number;
  readonly seed: string;
  readonly lostPer1000: number;
  /** Extra applications per 1,000 messages (an event applied three times counts two). */
  readonly duplicatesPer1000: number;
  readonly deliveriesPer1000: number;
  readonly crashesPer1000: number;
  readonly throughputPerSecond: number;
  readonly wallSeconds: number;
}

/** A cell of the table: the median of the repetitions, with their spread. */
export interface SweepCell {
  readonly mode: Mode;
  readonly batchSize: number;
  readonly crashRate: number;
  readonly runs: number;
  readonly median: Omit<SweepPoint, 'mode' | 'batchSize' | 'crashRate' | 'seed'>;
  readonly min: Omit<SweepPoint, 'mode' | 'batchSize' | 'crashRate' | 'seed'>;
  readonly max: Omit<SweepPoint, 'mode' | 'batchSize' | 'crashRate' | 'seed'>;
}

const METRICS = [
  'lostPer1000',
  'duplicatesPer1000',
  'deliveriesPer1000',
  'crashesPer1000',
  'throughputPerSecond',
  'wallSeconds',
] as const;

const perThousand = (count: number, messages: number) => Math.round((count / messages) * 1000 * 10) / 10;

export function pointsOf(report: ExperimentReport, batchSize: number, wallSeconds: number): SweepPoint[] {
  const messages = report.config.messages;
  return (Object.entries(report.modes) as [Mode, NonNullable<ExperimentReport['modes'][Mode]>][]).map(
    ([mode, outcome]) => ({
      mode,
      batchSize,
      crashRate: report.config.crashRate,
      seed: report.config.seed,
      lostPer1000: perThousand(outcome.lost, messages),
      duplicatesPer1000: perThousand(outcome.extraApplications, messages),
      deliveriesPer1000: perThousand(outcome.deliveries, messages),
      crashesPer1000: perThousand(outcome.crashes, messages),
      throughputPerSecond: outcome.throughputPerSecond,
      wallSeconds: Math.round(wallSeconds * 10) / 10,
    }),
  );
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** Groups points by (mode, batch size, crash rate) and summarises their repetitions. */
export function summarise(points: readonly SweepPoint[]): SweepCell[] {
  const groups = new Map<string, SweepPoint[]>();
  for (const point of points) {
    const key = `${point.mode}|${point.batchSize}|${point.crashRate}`;
    groups.set(key, [...(groups.get(key) ?? []), point]);
  }
  return [...groups.values()].map((group) => {
    const [first] = group as [SweepPoint];
    const stat = (f: (values: number[]) => number) =>
      Object.fromEntries(
        METRICS.map((metric) => [metric, f(group.map((point) => point[metric]))]),
      ) as SweepCell['median'];
    return {
      mode: first.mode,
      batchSize: first.batchSize,
      crashRate: first.crashRate,
      runs: group.length,
      median: stat(median),
      min: stat((values) => Math.min(...values)),
      max: stat((values) => Math.max(...values)),
    };
  });
}

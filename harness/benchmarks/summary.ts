import type { Mode } from '../../contract/topology.js';
import type { CellResult } from './end-to-end.js';
import type { CellRatios, Target } from './report.js';
import type { ScalePoint } from './scale.js';

/** Median and spread of repeated measurements. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: readonly number[];
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length === 0
      ? 0
      : sorted.length % 2
        ? (sorted[middle] ?? 0)
        : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return {
    median: Math.round(median * 10) / 10,
    min: sorted[0] ?? 0,
    max: sorted[sorted.length - 1] ?? 0,
    runs: values,
  };
}

/** a ÷ b, two decimals; 0 when b is 0. */
export const ratio = (a: number, b: number): number => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);

/** The cell's ratios of medians: end to end ÷ floor per mode, and between modes end to end. */
export function ratiosOf(cell: CellResult): CellRatios {
  const median = (mode: Mode, which: 'endToEnd' | 'floor') => cell.modes[mode]?.[which].median ?? 0;
  return {
    batchSize: cell.batchSize,
    concurrency: cell.concurrency,
    endToEndOverFloor: Object.fromEntries(
      Object.keys(cell.modes).map((mode) => [
        mode,
        ratio(median(mode as Mode, 'endToEnd'), median(mode as Mode, 'floor')),
      ]),
    ),
    effectivelyOnceOverAtLeastOnce: ratio(
      median('effectively-once', 'endToEnd'),
      median('at-least-once', 'endToEnd'),
    ),
    powertoolsOverEffectivelyOnce: ratio(
      median('powertools-idempotency', 'endToEnd'),
      median('effectively-once', 'endToEnd'),
    ),
  };
}

/**
 * The bench's targets: at batch 10, each mode ≥ 60% of its floor and effectively-once ≥ 85% of
 * at-least-once; the experiment's peak memory at the largest scale point, and the verifier's flat.
 */
export function targetsOf(ratios: readonly CellRatios[], scale: readonly ScalePoint[]): Target[] {
  const targets: Target[] = [];
  for (const cell of ratios.filter((r) => r.batchSize === 10)) {
    for (const [mode, value] of Object.entries(cell.endToEndOverFloor)) {
      targets.push({
        name: `${mode} end to end ≥ 60% of its floor (batch 10, concurrency ${cell.concurrency})`,
        met: value >= 0.6,
        measured: `${Math.round(value * 100)}%`,
      });
    }
    targets.push({
      name: `effectively-once ≥ 85% of at-least-once (batch 10, concurrency ${cell.concurrency})`,
      met: cell.effectivelyOnceOverAtLeastOnce >= 0.85,
      measured: `${Math.round(cell.effectivelyOnceOverAtLeastOnce * 100)}%`,
    });
  }
  const largest = scale.reduce<ScalePoint | undefined>(
    (a, b) => (a && a.messages > b.messages ? a : b),
    undefined,
  );
  if (largest) {
    targets.push({
      name: `experiment process peak memory < 1 GiB at ${largest.messages.toLocaleString('en-US')} messages`,
      met: largest.peakRssKb.experiment < 1024 * 1024,
      measured: `${Math.round(largest.peakRssKb.experiment / 1024)} MB`,
    });
    const verifier = scale.map((point) => point.peakRssKb.verifier ?? 0).filter((kb) => kb > 0);
    if (verifier.length > 1) {
      const spreadRatio = Math.max(...verifier) / Math.min(...verifier);
      targets.push({
        name: 'verifier peak memory flat across scale points (largest ≤ 1.5 × smallest)',
        met: spreadRatio <= 1.5,
        measured: verifier.map((kb) => `${Math.round(kb / 1024)} MB`).join(' / '),
      });
    }
  }
  return targets;
}

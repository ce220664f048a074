import type { Mode } from '../../../contract/topology.js';
import type { ModeCost } from './cost-model.js';
import type { CellResult } from './end-to-end.js';
import type { CellRatios, Target } from './report.js';
import type { ScalePoint } from './scale.js';

/** a ÷ b, two decimals; 0 when b is 0. */
export const ratio = (a: number, b: number): number => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);

/** One row's price over another's per message: write units and US$ in total, two decimals each. */
export function priceRatio(
  numerator: ModeCost | undefined,
  denominator: ModeCost | undefined,
): { readonly writeUnits: number; readonly usd: number } | null {
  if (!numerator || !denominator) return null;
  return {
    writeUnits: ratio(numerator.perMessage.writeUnits, denominator.perMessage.writeUnits),
    usd: ratio(numerator.usdPerMillion.total, denominator.usdPerMillion.total),
  };
}

/** The ratios between modes end to end that the bench reports: numerator ÷ denominator. */
export const MODE_RATIOS = [
  { key: 'effectivelyOnceOverAtLeastOnce', numerator: 'effectively-once', denominator: 'at-least-once' },
  {
    key: 'powertoolsOverEffectivelyOnce',
    numerator: 'powertools-idempotency',
    denominator: 'effectively-once',
  },
] as const satisfies readonly {
  key: keyof CellRatios;
  numerator: Mode;
  denominator: Mode;
}[];

/**
 * Why a comparison of these modes in this cell has no number: `not measured (at-least-once was not
 * run)`; undefined when every one of them was measured. (A mode that was not run has no median and
 * its ratios are null in the JSON.)
 */
export function notMeasured(cell: CellRatios, modes: readonly Mode[]): string | undefined {
  const missing = modes.filter((mode) => cell.endToEndOverFloor[mode] === undefined);
  if (missing.length === 0) return undefined;
  return `not measured (${missing.join(' and ')} ${missing.length === 1 ? 'was' : 'were'} not run)`;
}

/** A ratio between modes as the table prints it: the number, or why there is none. */
export function modeRatioText(cell: CellRatios, which: (typeof MODE_RATIOS)[number]): string {
  return notMeasured(cell, [which.numerator, which.denominator]) ?? String(cell[which.key]);
}

/** The cell's ratios of medians: end to end ÷ floor per mode, and between modes end to end. */
export function ratiosOf(cell: CellResult): CellRatios {
  const median = (mode: Mode, which: 'endToEnd' | 'floor') => cell.modes[mode]?.[which].median ?? 0;
  const betweenModes = (numerator: Mode, denominator: Mode): number | null =>
    cell.modes[numerator] && cell.modes[denominator]
      ? ratio(median(numerator, 'endToEnd'), median(denominator, 'endToEnd'))
      : null;
  return {
    batchSize: cell.batchSize,
    concurrency: cell.concurrency,
    endToEndOverFloor: Object.fromEntries(
      Object.keys(cell.modes).map((mode) => [
        mode,
        ratio(median(mode as Mode, 'endToEnd'), median(mode as Mode, 'floor')),
      ]),
    ),
    effectivelyOnceOverAtLeastOnce: betweenModes('effectively-once', 'at-least-once'),
    powertoolsOverEffectivelyOnce: betweenModes('powertools-idempotency', 'effectively-once'),
  };
}

/**
 * The targets at batch 10: each mode ≥ 60% of its floor, and effectively-once ≥ 85% of
 * at-least-once; `checked: false` where a mode it compares was not run.
 */
function ratioTargets(
  ratios: readonly CellRatios[],
): { readonly target: Target; readonly checked: boolean }[] {
  return ratios
    .filter((r) => r.batchSize === 10)
    .flatMap((cell) => {
      const missing = notMeasured(cell, ['effectively-once', 'at-least-once']);
      const measured = cell.effectivelyOnceOverAtLeastOnce;
      return [
        // Only measured modes have a floor ratio.
        ...Object.entries(cell.endToEndOverFloor).map(([mode, value]) => ({
          checked: true,
          target: {
            name: `${mode} end to end ≥ 60% of its floor (batch 10, concurrency ${cell.concurrency})`,
            met: value >= 0.6,
            measured: `${Math.round(value * 100)}%`,
          },
        })),
        {
          checked: measured !== null,
          target: {
            name: `effectively-once ≥ 85% of at-least-once (batch 10, concurrency ${cell.concurrency})`,
            met: measured !== null && measured >= 0.85,
            measured: measured === null ? (missing ?? 'not measured') : `${Math.round(measured * 100)}%`,
          },
        },
      ];
    });
}

/** The targets that could not be checked, a mode they compare not run; `measured` says which. */
export function targetsNotMeasured(ratios: readonly CellRatios[]): Target[] {
  return ratioTargets(ratios).flatMap(({ target, checked }) => (checked ? [] : [target]));
}

/**
 * The bench's targets that were checked: at batch 10, each mode ≥ 60% of its floor and
 * effectively-once ≥ 85% of at-least-once (when both ran); the experiment's peak memory at the
 * largest scale point, and the verifier's flat.
 */
export function targetsOf(ratios: readonly CellRatios[], scale: readonly ScalePoint[]): Target[] {
  const targets = ratioTargets(ratios).flatMap(({ target, checked }) => (checked ? [target] : []));
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

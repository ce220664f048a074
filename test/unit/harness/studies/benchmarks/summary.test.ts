import { describe, expect, it } from 'vitest';
import type { CellModeResult, CellResult } from '../../../../../harness/studies/benchmarks/end-to-end.js';
import type { CellRatios } from '../../../../../harness/studies/benchmarks/report.js';
import type { ScalePoint } from '../../../../../harness/studies/benchmarks/scale.js';
import { spread } from '../../../../../harness/studies/benchmarks/spread.js';
import {
  MODE_RATIOS,
  modeRatioText,
  notMeasured,
  ratio,
  ratiosOf,
  targetsNotMeasured,
  targetsOf,
} from '../../../../../harness/studies/benchmarks/summary.js';

describe('spread', () => {
  it('takes the middle value of an odd count, and keeps the runs in their order', () => {
    expect(spread([30, 10, 20])).toEqual({ median: 20, min: 10, max: 30, runs: [30, 10, 20] });
  });

  it('averages the two middle values of an even count, to one decimal', () => {
    expect(spread([4, 1, 3, 2])).toMatchObject({ median: 2.5, min: 1, max: 4 });
    expect(spread([3.456])).toMatchObject({ median: 3.5, min: 3.456, max: 3.456 });
  });

  it('is all zeros without runs', () => {
    expect(spread([])).toEqual({ median: 0, min: 0, max: 0, runs: [] });
  });
});

describe('ratio', () => {
  it('divides to two decimals', () => {
    expect(ratio(3, 4)).toBe(0.75);
    expect(ratio(2, 3)).toBe(0.67);
    expect(ratio(250, 100)).toBe(2.5);
  });

  it('is 0 when the divisor is not positive', () => {
    expect(ratio(1, 0)).toBe(0);
    expect(ratio(5, -1)).toBe(0);
  });
});

const result = (endToEnd: number, floor: number): CellModeResult => ({
  endToEnd: spread([endToEnd]),
  floor: spread([floor]),
  exact: true,
  visibilityOverruns: 0,
});

const cell = (batchSize: number, concurrency: number, modes: CellResult['modes']): CellResult => ({
  batchSize,
  concurrency,
  batchingWindowSeconds: 0,
  messages: 200,
  repetitions: 1,
  modes,
});

describe('ratiosOf a grid cell', () => {
  it('divides medians: each mode end to end by its floor, and the modes end to end by each other', () => {
    const ratios = ratiosOf(
      cell(10, 5, {
        'at-most-once': result(120, 150),
        'at-least-once': result(100, 200),
        'effectively-once': result(90, 100),
        'powertools-idempotency': result(45, 90),
      }),
    );
    expect(ratios).toEqual({
      batchSize: 10,
      concurrency: 5,
      endToEndOverFloor: {
        'at-most-once': 0.8,
        'at-least-once': 0.5,
        'effectively-once': 0.9,
        'powertools-idempotency': 0.5,
      },
      effectivelyOnceOverAtLeastOnce: 0.9,
      powertoolsOverEffectivelyOnce: 0.5,
    });
  });

  it('uses the median of the repetitions, and no number for a ratio with a mode that was not measured', () => {
    const ratios = ratiosOf(
      cell(1, 2, {
        'effectively-once': { ...result(0, 0), endToEnd: spread([50, 90, 80]), floor: spread([100, 100]) },
      }),
    );
    expect(ratios.endToEndOverFloor).toEqual({ 'effectively-once': 0.8 });
    expect(ratios.effectivelyOnceOverAtLeastOnce).toBeNull(); // at-least-once not measured: no number
    expect(ratios.powertoolsOverEffectivelyOnce).toBeNull();
  });
});

describe('a ratio between modes that were not all measured', () => {
  const only = (modes: CellResult['modes']) => ratiosOf(cell(10, 5, modes));
  const [effectivelyOverAtLeast, powertoolsOverEffectively] = MODE_RATIOS;

  it('is not a number: it says which modes were not run', () => {
    const ratios = only({ 'effectively-once': result(90, 100) });
    expect(notMeasured(ratios, ['effectively-once', 'at-least-once'])).toBe(
      'not measured (at-least-once was not run)',
    );
    expect(notMeasured(ratios, ['at-most-once', 'at-least-once'])).toBe(
      'not measured (at-most-once and at-least-once were not run)',
    );
    expect(modeRatioText(ratios, effectivelyOverAtLeast)).toBe('not measured (at-least-once was not run)');
    expect(modeRatioText(ratios, powertoolsOverEffectively)).toBe(
      'not measured (powertools-idempotency was not run)',
    );
  });

  it('is the number when both were measured', () => {
    const ratios = only({ 'at-least-once': result(100, 200), 'effectively-once': result(90, 100) });
    expect(notMeasured(ratios, ['effectively-once', 'at-least-once'])).toBeUndefined();
    expect(modeRatioText(ratios, effectivelyOverAtLeast)).toBe('0.9');
  });

  it('leaves its target unchecked, neither met nor MISSED, and says why', () => {
    const ratios = [only({ 'effectively-once': result(90, 100) })];
    expect(targetsOf(ratios, []).map((target) => target.name)).toEqual([
      'effectively-once end to end ≥ 60% of its floor (batch 10, concurrency 5)',
    ]);
    expect(targetsNotMeasured(ratios)).toEqual([
      {
        name: 'effectively-once ≥ 85% of at-least-once (batch 10, concurrency 5)',
        met: false,
        measured: 'not measured (at-least-once was not run)',
      },
    ]);
  });
});

const ratiosAt = (
  batchSize: number,
  endToEndOverFloor: CellRatios['endToEndOverFloor'],
  effectivelyOnceOverAtLeastOnce: number,
): CellRatios => ({
  batchSize,
  concurrency: 5,
  endToEndOverFloor,
  effectivelyOnceOverAtLeastOnce,
  powertoolsOverEffectivelyOnce: 1,
});

const point = (messages: number, experimentKb: number, verifierKb: number | undefined): ScalePoint => ({
  messages,
  wallSeconds: 1,
  runSeconds: 1,
  throughputPerSecond: 1,
  exact: true,
  peakRssKb: { experiment: experimentKb, verifier: verifierKb, dynamodbLocal: undefined },
});

describe('targetsOf', () => {
  it('checks each mode against 60% of its floor and effectively-once against 85% of at-least-once, at batch 10 only', () => {
    const targets = targetsOf(
      [
        ratiosAt(1, { 'at-least-once': 0.1 }, 0.1),
        ratiosAt(10, { 'at-least-once': 0.6, 'effectively-once': 0.594 }, 0.849),
      ],
      [],
    );
    expect(targets).toEqual([
      {
        name: 'at-least-once end to end ≥ 60% of its floor (batch 10, concurrency 5)',
        met: true,
        measured: '60%',
      },
      {
        name: 'effectively-once end to end ≥ 60% of its floor (batch 10, concurrency 5)',
        met: false,
        measured: '59%',
      },
      {
        name: 'effectively-once ≥ 85% of at-least-once (batch 10, concurrency 5)',
        met: false,
        measured: '85%',
      },
    ]);
  });

  it('checks the experiment’s memory at the largest scale point and the verifier’s across points', () => {
    const targets = targetsOf(
      [],
      [point(100_000, 900 * 1024, 150 * 1024), point(1000, 300 * 1024, 100 * 1024)],
    );
    expect(targets).toEqual([
      {
        name: 'experiment process peak memory < 1 GiB at 100,000 messages',
        met: true,
        measured: '900 MB',
      },
      {
        name: 'verifier peak memory flat across scale points (largest ≤ 1.5 × smallest)',
        met: true,
        measured: '150 MB / 100 MB',
      },
    ]);

    const [memory, flat] = targetsOf(
      [],
      [point(1000, 100 * 1024, 100 * 1024), point(10_000, 1024 * 1024, 151 * 1024)],
    );
    expect(memory).toMatchObject({ met: false, measured: '1024 MB' });
    expect(flat).toMatchObject({ met: false, measured: '100 MB / 151 MB' });
  });

  it('has no memory targets without scale points, and no flatness target from one verifier reading', () => {
    expect(targetsOf([], [])).toEqual([]);
    expect(targetsOf([], [point(1000, 100, undefined), point(2000, 100, 100)]).map((t) => t.name)).toEqual([
      'experiment process peak memory < 1 GiB at 2,000 messages',
    ]);
  });
});

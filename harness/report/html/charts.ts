/**
 * Charts as static SVG, rendered when the report is built (Vega-Lite compiled to Vega, rendered
 * headless): the page needs no charting script and makes no request to show them.
 */
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import type { Mode } from '../../../contract/topology.js';
import type { Timeline } from '../../../verifier/event-details.js';
import type { ModeOutcome } from '../../../verifier/outcome.js';
import { STATE_STYLES } from './states.js';

const FONT = 'system-ui, Segoe UI, Roboto, Helvetica, Arial, sans-serif';

const CONFIG: vegaLite.TopLevelSpec['config'] = {
  font: FONT,
  view: { stroke: null },
  axis: { labelColor: '#3e4c59', titleColor: '#3e4c59', gridColor: '#e4e7eb', domainColor: '#9aa5b1' },
  legend: { labelColor: '#3e4c59', titleColor: '#3e4c59', orient: 'bottom', labelLimit: 400 },
};

export async function renderSvg(spec: vegaLite.TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Deliveries and acknowledgements as the local runtime counted them, over time: only if the
 * runtime's stats carry them (`runtime.timeline`, same bucketing as the verifier's timeline).
 */
export interface RuntimeTimeline {
  readonly startMs: number;
  readonly bucketMs: number;
  readonly deliveries: readonly number[];
  readonly acknowledged: readonly number[];
}

const numbers = (value: unknown): value is readonly number[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'number');

/** Reads `runtime.timeline` when an environment provides one; absent (or another shape) means none. */
export function runtimeTimeline(runtime: object | undefined): RuntimeTimeline | undefined {
  const timeline: unknown = runtime && 'timeline' in runtime ? runtime.timeline : undefined;
  if (typeof timeline !== 'object' || timeline === null) return undefined;
  const candidate = timeline as Record<string, unknown>;
  if (
    typeof candidate.startMs === 'number' &&
    typeof candidate.bucketMs === 'number' &&
    candidate.bucketMs > 0 &&
    numbers(candidate.deliveries) &&
    numbers(candidate.acknowledged)
  ) {
    return {
      startMs: candidate.startMs,
      bucketMs: candidate.bucketMs,
      deliveries: candidate.deliveries,
      acknowledged: candidate.acknowledged,
    };
  }
  return undefined;
}

const SERIES = {
  applications: { label: 'applications (ledger)', color: '#2f9e44' },
  deliveries: { label: 'deliveries (runtime)', color: '#7b8794' },
  acknowledged: { label: 'acknowledged (runtime)', color: '#3b7dd8' },
  crashes: { label: 'crashes', color: '#c62828' },
} as const;

interface Point {
  readonly t: number;
  readonly t2: number;
  readonly middle: number;
  readonly series: string;
  readonly count: number;
}

function points(
  series: keyof typeof SERIES,
  start: number,
  bucketMs: number,
  counts: readonly number[],
  origin: number,
): Point[] {
  return counts.map((count, index) => {
    const t = (start + index * bucketMs - origin) / 1000;
    return { t, t2: t + bucketMs / 1000, middle: t + bucketMs / 2000, series: SERIES[series].label, count };
  });
}

export interface TimelineInput {
  readonly timeline: Timeline;
  readonly runtime: RuntimeTimeline | undefined;
}

/** The earliest bucket start and the latest bucket end of all the modes' timelines, in epoch ms. */
export function timelineExtent(inputs: readonly TimelineInput[]): { origin: number; end: number } {
  const spans = inputs.flatMap(({ timeline, runtime }) => [
    [timeline.startMs, timeline.startMs + timeline.bucketMs * Math.max(timeline.applications.length, 1)],
    ...(runtime
      ? [[runtime.startMs, runtime.startMs + runtime.bucketMs * Math.max(runtime.deliveries.length, 1)]]
      : []),
  ]);
  return {
    origin: Math.min(...spans.map(([start]) => start ?? 0)),
    end: Math.max(...spans.map(([, end]) => end ?? 0)),
  };
}

/**
 * A mode's timeline: applications per bucket as bars, crashes as red rules where they happened,
 * and the runtime's deliveries and acknowledgements as lines when it counted them. Every mode's
 * chart gets the same time axis, so the modes can be compared by eye.
 */
export function timelineChart(
  mode: Mode,
  input: TimelineInput,
  extent: { origin: number; end: number },
): Promise<string> {
  const { timeline, runtime } = input;
  const values = [
    ...points('applications', timeline.startMs, timeline.bucketMs, timeline.applications, extent.origin),
    ...points('crashes', timeline.startMs, timeline.bucketMs, timeline.crashes, extent.origin).filter(
      (point) => point.count > 0,
    ),
    ...(runtime
      ? [
          ...points('deliveries', runtime.startMs, runtime.bucketMs, runtime.deliveries, extent.origin),
          ...points('acknowledged', runtime.startMs, runtime.bucketMs, runtime.acknowledged, extent.origin),
        ]
      : []),
  ];
  const shown = (Object.keys(SERIES) as (keyof typeof SERIES)[]).filter(
    (key) => runtime !== undefined || (key !== 'deliveries' && key !== 'acknowledged'),
  );
  const color = {
    field: 'series',
    type: 'nominal' as const,
    title: null,
    scale: { domain: shown.map((key) => SERIES[key].label), range: shown.map((key) => SERIES[key].color) },
  };
  const x = {
    field: 't',
    type: 'quantitative' as const,
    title: 'seconds since the first application',
    scale: { domain: [0, Math.max((extent.end - extent.origin) / 1000, 0.001)], nice: false },
  };
  const bucketSeconds = timeline.bucketMs / 1000;
  const spec: vegaLite.TopLevelSpec = {
    description: `${mode}: applications and crashes per ${bucketSeconds} s`,
    width: 980,
    height: 130,
    data: { values },
    config: CONFIG,
    layer: [
      {
        layer: [
          {
            transform: [{ filter: `datum.series === '${SERIES.applications.label}'` }],
            mark: { type: 'rect', opacity: 0.85 },
            encoding: {
              x,
              x2: { field: 't2' },
              y: { field: 'count', type: 'quantitative', title: `per ${bucketSeconds} s` },
              color,
            },
          },
          ...(runtime
            ? [
                {
                  transform: [
                    {
                      filter: `datum.series !== '${SERIES.applications.label}' && datum.series !== '${SERIES.crashes.label}'`,
                    },
                  ],
                  mark: { type: 'line' as const, interpolate: 'step-after' as const, strokeWidth: 1.5 },
                  encoding: { x, y: { field: 'count', type: 'quantitative' as const }, color },
                },
              ]
            : []),
        ],
      },
      ...crashLayers(values, x, color),
    ],
  };
  return renderSvg(spec);
}

/** The layers of a layered spec (vega-lite exports the top-level type only). */
type LayerList = Extract<vegaLite.TopLevelSpec, { layer: unknown }>['layer'];

/** Above this many buckets with crashes, rules and labels would merge into a red wall: bars instead. */
const MAX_CRASH_RULES = 40;

/**
 * Crashes as red rules at the middle of their bucket, with the count above when more than one:
 * when they happened matters more to a reader than how many fit in a bucket. A run with crashes in
 * many buckets gets red bars on the applications' axis instead.
 */
function crashLayers(
  values: readonly Point[],
  x: { field: string; type: 'quantitative'; title: string; scale: { domain: number[]; nice: boolean } },
  color: { field: string; type: 'nominal'; title: null; scale: { domain: string[]; range: string[] } },
): LayerList {
  const crashes = `datum.series === '${SERIES.crashes.label}'`;
  const buckets = values.filter((point) => point.series === SERIES.crashes.label).length;
  if (buckets > MAX_CRASH_RULES) {
    return [
      {
        transform: [{ filter: crashes }],
        mark: { type: 'rect' },
        encoding: { x, x2: { field: 't2' }, y: { field: 'count', type: 'quantitative' }, color },
      },
    ];
  }
  const middle = { ...x, field: 'middle' };
  return [
    {
      transform: [{ filter: crashes }],
      mark: { type: 'rule', strokeDash: [4, 3], strokeWidth: 1.5 },
      encoding: { x: middle, color },
    },
    {
      transform: [{ filter: crashes }],
      mark: { type: 'point', shape: 'triangle-down', filled: true, size: 70, opacity: 1 },
      encoding: { x: middle, y: { value: -5 }, color },
    },
    {
      transform: [{ filter: `${crashes} && datum.count > 1` }],
      mark: { type: 'text', dy: -16, fontSize: 10, fontWeight: 'bold', color: SERIES.crashes.color },
      encoding: { x: middle, y: { value: 0 }, text: { field: 'count' } },
    },
  ];
}

/** The outcome counts a run without per-event detail still has, in legend order. */
export function aggregateStates(outcome: ModeOutcome): { key: string; label: string; count: number }[] {
  const byKey: Record<string, number> = {
    o: outcome.appliedOnce,
    d: outcome.duplicated,
    l: outcome.lost,
    x: outcome.deadLettered - (outcome.deadLetteredUnseen ?? 0),
    // FIFO modes only: the dead letters counted behind a group's head.
    ...(outcome.deadLetteredUnseen !== undefined ? { h: outcome.deadLetteredUnseen } : {}),
    e: outcome.unexpected,
  };
  return STATE_STYLES.filter((style) => style.key in byKey).map((style) => ({
    key: style.key,
    label: style.label,
    count: byKey[style.key] ?? 0,
  }));
}

/** A mode's per-state counts as labelled horizontal bars: the view for runs too large for a cell per event. */
export function aggregateChart(mode: Mode, outcome: ModeOutcome): Promise<string> {
  const values = aggregateStates(outcome);
  const styles = STATE_STYLES.filter((style) => values.some((value) => value.key === style.key));
  const y = {
    field: 'label',
    type: 'nominal' as const,
    title: null,
    sort: styles.map((style) => style.label),
  };
  const spec: vegaLite.TopLevelSpec = {
    description: `${mode}: events per state`,
    width: 560,
    height: { step: 22 },
    data: { values },
    config: CONFIG,
    encoding: { y },
    layer: [
      {
        mark: { type: 'bar', cornerRadiusEnd: 2 },
        encoding: {
          x: { field: 'count', type: 'quantitative', title: 'events' },
          color: {
            field: 'label',
            type: 'nominal',
            legend: null,
            scale: {
              domain: styles.map((style) => style.label),
              range: styles.map((style) => style.background),
            },
          },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 4, color: '#1f2933' },
        encoding: { x: { field: 'count', type: 'quantitative' }, text: { field: 'count', format: ',' } },
      },
    ],
  };
  return renderSvg(spec);
}

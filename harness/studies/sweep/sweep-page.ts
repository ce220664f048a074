import type * as vegaLite from 'vega-lite';
import { renderSvg } from '../../report/html/charts.js';
import { escapeHtml } from '../../report/html/html.js';
import type { SweepCell } from './sweep-data.js';

const CHARTS = [
  { metric: 'lostPer1000', title: 'lost per 1,000 messages' },
  { metric: 'duplicatesPer1000', title: 'extra applications per 1,000 messages' },
  { metric: 'deliveriesPer1000', title: 'deliveries per 1,000 messages' },
  { metric: 'throughputPerSecond', title: 'messages per second (end to end)' },
] as const;

/** One chart: the metric's median against batch size, a line per mode, a panel per crash rate, min–max as a band. */
function chartSpec(
  cells: readonly SweepCell[],
  metric: (typeof CHARTS)[number]['metric'],
  title: string,
): vegaLite.TopLevelSpec {
  const values = cells.map((cell) => ({
    mode: cell.mode,
    batchSize: cell.batchSize,
    crashRate: `crash rate ${cell.crashRate}`,
    median: cell.median[metric],
    min: cell.min[metric],
    max: cell.max[metric],
  }));
  // Ordinal: the batch sizes tried, evenly spaced, labelled as they are.
  const x = { field: 'batchSize', type: 'ordinal', title: 'batch size', axis: { labelAngle: 0 } } as const;
  const mode = { field: 'mode', type: 'nominal', title: 'mode' } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    data: { values },
    facet: { column: { field: 'crashRate', type: 'nominal', title: null } },
    spec: {
      width: 300,
      height: 200,
      layer: [
        {
          mark: { type: 'area', opacity: 0.12 },
          encoding: {
            x,
            y: { field: 'min', type: 'quantitative' },
            y2: { field: 'max' },
            color: { ...mode, legend: null },
          },
        },
        {
          // Colour and shape both say the mode, so the chart reads without colour too.
          mark: { type: 'line', point: { size: 60 } },
          encoding: {
            x,
            y: { field: 'median', type: 'quantitative', title: null },
            color: mode,
            shape: mode,
          },
        },
      ],
    },
    config: {
      font: 'system-ui, Segoe UI, Roboto, Helvetica, Arial, sans-serif',
      legend: { orient: 'bottom', labelLimit: 400 },
    },
  } as vegaLite.TopLevelSpec;
}

export async function renderSweepPage(input: {
  readonly createdAt: string;
  readonly command: string;
  readonly messages: number;
  readonly cells: readonly SweepCell[];
  readonly table: string;
}): Promise<string> {
  const charts = await Promise.all(
    CHARTS.map(({ metric, title }) => renderSvg(chartSpec(input.cells, metric, title))),
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Batch-size sweep ${escapeHtml(input.createdAt)}</title>
<style>
body{font-family:system-ui,Segoe UI,Roboto,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:72rem;color:#1f2933;line-height:1.45}
pre{background:#f5f7fa;padding:1rem;overflow:auto;font-size:.8rem}figure{margin:1.5rem 0}code{background:#f5f7fa;padding:0 .25rem}
</style></head><body>
<h1>The batch-size trade-off, measured</h1>
<p>Each point is the median of the repetitions of one setting (${input.messages} messages per mode, fixed seeds); the band is their range.
A crash fails the whole batch: a larger batch means fewer acknowledgements, but each crash loses (at-most-once) or
re-applies (at-least-once) more messages. Idempotent work (effectively-once) keeps the damage at zero whatever the batch size.</p>
<p>Reproduce: <code>${escapeHtml(input.command)}</code> (${escapeHtml(input.createdAt)}).</p>
${charts.map((svg, index) => `<figure aria-label="${escapeHtml(CHARTS[index]?.title ?? '')}">${svg}</figure>`).join('\n')}
<h2>Table</h2>
<pre>${escapeHtml(input.table)}</pre>
</body></html>
`;
}

/**
 * `npm run sweep`: the batch-size trade-off, measured. Runs the embedded experiment over batch
 * sizes and crash rates with fixed seeds and repetitions, and writes reports/sweep-<ts>.json and
 * .html (charts rendered to static SVG with Vega-Lite): per mode, lost / extra applications /
 * deliveries per 1,000 messages, and throughput, against batch size.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MODES, MODE_NAMES, MODES } from '../../contract/topology.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { startEmbeddedEnvironment } from '../environments/embedded.js';
import { NO_FAULTS } from '../local-aws/faults/faults.js';
import { DEFAULTS } from '../options/declaration.js';
import type { ParsedOptions } from '../options/parse.js';
import { type Finished, runEntryPoint } from '../options/run.js';
import { newRunId, runExperiment } from '../run/experiment.js';
import { pointsOf, type SweepCell, type SweepPoint, summarise } from '../studies/sweep/sweep-data.js';
import { renderSweepPage } from '../studies/sweep/sweep-page.js';

function formatTable(cells: readonly SweepCell[]): string {
  const rows = [...cells]
    .sort(
      (a, b) =>
        a.crashRate - b.crashRate ||
        a.batchSize - b.batchSize ||
        MODE_NAMES.indexOf(a.mode) - MODE_NAMES.indexOf(b.mode),
    )
    .map((cell) => {
      const range = (metric: keyof SweepCell['median']) =>
        cell.runs > 1
          ? `${cell.median[metric]} [${cell.min[metric]}–${cell.max[metric]}]`
          : String(cell.median[metric]);
      return [
        String(cell.crashRate),
        String(cell.batchSize),
        cell.mode,
        range('lostPer1000'),
        range('duplicatesPer1000'),
        range('deliveriesPer1000'),
        range('throughputPerSecond'),
      ];
    });
  const header = [
    'crash rate',
    'batch',
    'mode',
    'lost /1k',
    'extra applications /1k',
    'deliveries /1k',
    'msg/s',
  ];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * A batch of 100 records takes far longer than one of 10, and a function timeout sized for 10 would
 * kill it: timeouts, not crashes, would then draw the curve. As a team would size the function for
 * its batch, the local visibility (and with it the function timeout) grows with the batch size.
 */
function visibilityFor(batchSize: number): number {
  return Math.max(SWEEP_MIN_VISIBILITY_SECONDS, Math.ceil(batchSize / 4) + 6);
}

/**
 * The sweep runs every mode at the topology's concurrency (5 batches in flight each, not the
 * default run's 2), where a batch of 10 takes up to 3–5 s on DynamoDB Local: its visibility timeout
 * starts at 10 s, as when the published curve was measured.
 */
const SWEEP_MIN_VISIBILITY_SECONDS = 10;
const SWEEP_CONCURRENCY = MODES['effectively-once'].maxConcurrency;

async function main({ values }: ParsedOptions<'sweep'>): Promise<Finished> {
  const { 'batch-sizes': batchSizes, 'crash-rates': crashRates, repeats, messages } = values;
  const settings = crashRates.flatMap((crashRate) =>
    batchSizes.flatMap((batchSize) =>
      Array.from({ length: repeats }, (_, repeat) => ({ crashRate, batchSize, repeat })),
    ),
  );
  const points: SweepPoint[] = [];
  for (const [index, { crashRate, batchSize, repeat }] of settings.entries()) {
    // One seed per repeat, the same at every batch size: the same manifest and the same crash
    // draws, so the curve shows what the batch size does, not what another seed drew.
    const seed = `sweep-${repeat + 1}`;
    process.stderr.write(
      `• run ${index + 1}/${settings.length}: batch size ${batchSize}, crash rate ${crashRate}, seed ${seed}\n`,
    );
    const started = performance.now();
    const visibilityTimeoutSeconds = visibilityFor(batchSize);
    const env = await startEmbeddedEnvironment({
      modes: DEFAULT_MODES,
      crashRate,
      crashSeed: seed,
      batchSize,
      concurrency: SWEEP_CONCURRENCY,
      visibilityTimeoutSeconds,
    });
    try {
      const report = await runExperiment(
        env,
        {
          messages,
          accounts: DEFAULTS.accounts,
          crashRate,
          batchSize,
          seed,
          modes: DEFAULT_MODES,
          concurrency: SWEEP_CONCURRENCY,
          visibilityTimeoutSeconds,
          faults: NO_FAULTS,
        },
        newRunId(seed),
        { phase: () => undefined },
      );
      points.push(...pointsOf(report, batchSize, (performance.now() - started) / 1000));
    } finally {
      await env.stop();
    }
  }

  const cells = summarise(points);
  const table = formatTable(cells);
  const createdAt = new Date().toISOString();
  const stamp = createdAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const command =
    `npm run sweep -- --batch-sizes ${batchSizes.join(',')} --crash-rates ${crashRates.join(',')} ` +
    `--repeats ${repeats} --messages ${messages}`;
  const reportsDir = join(PROJECT_ROOT, 'reports');
  mkdirSync(reportsDir, { recursive: true });
  const jsonPath = join(reportsDir, `sweep-${stamp}.json`);
  const htmlPath = join(reportsDir, `sweep-${stamp}.html`);
  writeFileSync(jsonPath, `${JSON.stringify({ createdAt, command, messages, points, cells }, null, 2)}\n`);
  writeFileSync(htmlPath, await renderSweepPage({ createdAt, command, messages, cells, table }));
  process.stdout.write(`${table}\n\n`);
  return { report: jsonPath, page: htmlPath };
}

runEntryPoint('sweep', main);

/**
 * `npm run sweep`: the batch-size trade-off, measured. Runs the embedded experiment over batch
 * sizes and crash rates with fixed seeds and repetitions, and writes reports/sweep-<ts>.json and
 * .html (charts rendered to static SVG with Vega-Lite): per mode, lost / extra applications /
 * deliveries per 1,000 messages, and throughput, against batch size.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { MODE_NAMES, MODES } from '../../contract/topology.js';
import { PROJECT_ROOT } from '../../lib/bundling.js';
import { DEFAULTS } from '../cli/cli-args.js';
import { startEmbeddedEnvironment } from '../environments/embedded.js';
import { newRunId, runExperiment } from '../experiment/experiment.js';
import { NO_FAULTS } from '../faults/faults.js';
import { pointsOf, type SweepCell, type SweepPoint, summarise } from './sweep-data.js';
import { renderSweepPage } from './sweep-page.js';

const USAGE = `Usage: npm run sweep -- [options]

  --batch-sizes a,b,…   batch sizes to try                     (default 1,10,50,100)
  --crash-rates a,b,…   crash rates to try                     (default 0.02,0.05)
  --repeats N           runs per setting; repeat r (1, 2, …) uses seed sweep-<r> at every batch size and
                        crash rate, so the same events crash everywhere  (default 2)
  --messages N          messages per mode per run              (default 200)
  --quick               batch sizes 1,10, crash rate 0.02, 1 repeat, 60 messages
Each run is a whole embedded experiment (a few tens of seconds; large batches with crashes take
longer: a crash fails the whole batch). Writes reports/sweep-<timestamp>.json and .html.`;

function list(
  raw: string | undefined,
  fallback: number[],
  name: string,
  valid: (n: number) => boolean,
): number[] {
  if (raw === undefined) return fallback;
  const values = raw.split(',').map((value) => Number(value.trim()));
  if (values.length === 0 || values.some((value) => !Number.isFinite(value) || !valid(value))) {
    throw new Error(`--${name} takes a comma-separated list, got "${raw}"`);
  }
  return values;
}

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

// Node 20 is what these machines run; the SDK's notice about its future Node 22 floor is known.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

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

async function main(): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        'batch-sizes': { type: 'string' },
        'crash-rates': { type: 'string' },
        repeats: { type: 'string' },
        messages: { type: 'string' },
        quick: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  let batchSizes: number[];
  let crashRates: number[];
  let repeats: number;
  let messages: number;
  try {
    const quick = values.quick === true;
    batchSizes = list(
      text('batch-sizes'),
      quick ? [1, 10] : [1, 10, 50, 100],
      'batch-sizes',
      (n) => Number.isInteger(n) && n >= 1 && n <= 10_000,
    );
    crashRates = list(
      text('crash-rates'),
      quick ? [0.02] : [0.02, 0.05],
      'crash-rates',
      (n) => n >= 0 && n <= 1,
    );
    [repeats = 1] = list(text('repeats'), [quick ? 1 : 2], 'repeats', (n) => Number.isInteger(n) && n >= 1);
    [messages = 1] = list(
      text('messages'),
      [quick ? 60 : 200],
      'messages',
      (n) => Number.isInteger(n) && n >= 1,
    );
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }

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
      modes: MODE_NAMES,
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
          modes: MODE_NAMES,
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
  process.stdout.write(
    `${table}\n\nsweep: ${relative(process.cwd(), htmlPath)} (data: ${relative(process.cwd(), jsonPath)})\n`,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

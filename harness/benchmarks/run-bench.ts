/**
 * `npm run bench`: what each mode costs, measured in one run on this machine (harness/benchmarks/):
 *
 *   1. floor        each mode's handler code straight at DynamoDB Local (floor.ts)
 *   2. end to end   the embedded experiment per mode over a grid of batch size × concurrency,
 *                   interleaved with the floor in the same environment (end-to-end.ts)
 *   3. ratios       end to end ÷ floor; effectively-once ÷ at-least-once; powertools ÷ effectively-once
 *   4. counted      requests and write/read units per message, through a meter (metered-run.ts)
 *   5. scale        effectively-once at 1,000 / 10,000 / 100,000 messages, time and peak memory (scale.ts)
 *   6. cost         US$ per million messages from the counts and prices.ts (cost-model.ts)
 *
 * Prints a table (stdout), progress on stderr, writes reports/bench-<timestamp>.json.
 *
 *   npm run bench                               the full bench (the 100,000 scale point takes ~20 min)
 *   npm run bench -- --quick                    under 2 minutes: batch 10 × concurrency 5, one run, no scale
 *   npm run bench -- --scale 1000,10000         other scale points (--scale 0: none)
 *   npm run bench -- --repetitions 5 --messages 1000
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { MODE_NAMES, type Mode } from '../../contract/topology.js';
import { PROJECT_ROOT } from '../../lib/bundling.js';
import { costPerMillion } from './cost-model.js';
import { type CellResult, type GridCell, runCell } from './end-to-end.js';
import { meteredRun } from './metered-run.js';
import { PRICES } from './prices.js';
import type { BenchReport } from './report.js';
import { runScalePoint, type ScalePoint } from './scale.js';
import { ratiosOf, targetsOf } from './summary.js';
import { formatBench } from './table.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const FULL_GRID: readonly GridCell[] = [1, 10, 100].flatMap((batchSize) =>
  [2, 5].map((concurrency) => ({ batchSize, concurrency })),
);
const QUICK_GRID: readonly GridCell[] = [{ batchSize: 10, concurrency: 5 }];

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

function parseBenchArgs() {
  return parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      repetitions: { type: 'string' },
      messages: { type: 'string' },
      scale: { type: 'string' },
      modes: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
}

const USAGE = `Usage: npm run bench -- [--quick] [--repetitions N] [--messages N] [--scale 1000,10000] [--modes a,b]

  (no option)        the grid (batch 1, 10, 100 × concurrency 2, 5; 3 repetitions of 600 messages),
                     the metered run, and effectively-once at 1,000 / 10,000 / 100,000 messages
                     (the 100,000 point alone takes about 20 minutes here)
  --quick            batch 10 × concurrency 5, one repetition of 200, no scale points (under 2 min)
  --repetitions N    end-to-end and floor runs per grid cell and mode
  --messages N       messages per mode per run
  --scale a,b        scale points (0: none)
  --modes a,b        modes to measure (default: all)
Writes reports/bench-<timestamp>.json and prints the table.`;

async function main(): Promise<void> {
  let values: ReturnType<typeof parseBenchArgs>;
  try {
    values = parseBenchArgs();
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const quick = values.quick ?? false;
  const repetitions = Number(values.repetitions ?? (quick ? 1 : 3));
  const messages = Number(values.messages ?? (quick ? 200 : 600));
  const scaleSizes = (values.scale ?? (quick ? '0' : '1000,10000,100000'))
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const modes = (values.modes?.split(',') ?? MODE_NAMES) as Mode[];
  if (
    !Number.isInteger(repetitions) ||
    repetitions < 1 ||
    !Number.isInteger(messages) ||
    messages < 1 ||
    scaleSizes.some((n) => !Number.isInteger(n)) ||
    modes.some((m) => !MODE_NAMES.includes(m))
  ) {
    process.stderr.write(`error: invalid option value\n\n${USAGE}\n`);
    process.exit(2);
  }

  const startedAt = new Date();
  const grid = quick ? QUICK_GRID : FULL_GRID;
  const endToEnd: CellResult[] = [];
  for (const cell of grid) {
    log(
      `grid cell: batch ${cell.batchSize}, concurrency ${cell.concurrency}, ${messages} messages × ${repetitions} runs per mode`,
    );
    endToEnd.push(await runCell(cell, { modes, messages, repetitions, log }));
  }
  const meteredMessages = quick ? 100 : 1000;
  log(`metered run: ${meteredMessages} messages per mode`);
  const metered = await meteredRun({ modes, messages: meteredMessages, log });
  const scale: ScalePoint[] = [];
  const failures: string[] = [];
  for (const size of scaleSizes) {
    log(`scale: effectively-once at ${size} messages`);
    // A failed scale point (it runs long) must not throw away the grid measured before it.
    await runScalePoint(size).then(
      (point) => scale.push(point),
      (error: unknown) =>
        failures.push(`scale ${size}: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  const ratios = endToEnd.map(ratiosOf);
  const report: BenchReport = {
    kind: quick ? 'quick' : 'full',
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      platform: process.platform,
    },
    endToEnd,
    ratios,
    metered: {
      messages: meteredMessages,
      modes: metered.modes,
      cancelledTransaction: metered.cancelled,
      notes: [
        'Write units are counted per request by the documented rules (write-units.ts: 1 per KB of each item, 2 per KB of each item in a transaction). DynamoDB Local also returns ConsumedCapacity when asked (the meter asks): it matches the rules for PutItem and UpdateItem but reports 2 instead of 4 for a transaction of two small items, so reportedWriteUnits is kept beside it, not billed.',
        'A cancelled TransactWriteItems (a duplicate in effectively-once) returns no ConsumedCapacity from DynamoDB Local; counted here as if billed like the write it was (2 units per KB of each item). No duplicates occur in these runs (no crashes), so this never changes the table.',
        'at-most-once deletes its batch from its own code; its SQS deletes are one DeleteMessageBatch per 10 records of each invocation, from its invocations.',
        'Lambda GB-seconds are the local billed durations × the topology memory: an upper bound for AWS (a shared 2-core machine, DynamoDB Local behind them).',
      ],
    },
    cost: Object.fromEntries(
      Object.entries(metered.modes).map(([mode, result]) => [
        mode,
        result ? costPerMillion(mode as Mode, result.usage) : undefined,
      ]),
    ),
    prices: PRICES,
    scale,
    targets: targetsOf(ratios, scale),
    failures,
  };
  const dir = join(PROJECT_ROOT, 'reports');
  mkdirSync(dir, { recursive: true });
  const path = join(
    dir,
    `bench-${startedAt
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z')}.json`,
  );
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${formatBench(report, relative(process.cwd(), path))}\n`);
  if (failures.length > 0) {
    process.stderr.write(`bench: incomplete:\n  ${failures.join('\n  ')}\n`);
    process.exitCode = 1;
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);

/**
 * `npm run bench`: what each mode costs, measured in one run on this machine (harness/studies/benchmarks/):
 *
 *   1. floor        each mode's handler code straight at DynamoDB Local (floor.ts)
 *   2. end to end   the embedded experiment per mode over a grid of batch size × concurrency,
 *                   interleaved with the floor in the same environment (end-to-end.ts)
 *   3. ratios       end to end ÷ floor; effectively-once ÷ at-least-once; powertools ÷ effectively-once
 *   4. counted      requests and write/read units per message, through a meter (metered-run.ts)
 *   5. scale        effectively-once at 1,000 / 10,000 / 100,000 messages, time and peak memory (scale.ts)
 *   6. cost         US$ per million messages from the counts and prices.ts (cost-model.ts), and each
 *                   mode's production shape next to it (production-shape.ts): its business write
 *                   without the verifier's records; at-least-once's (one write) is the yardstick
 *   7. read cost    entry-upsert's balance read (the sum of an account's entries) at N entries per
 *                   account against one GetItem of a balance item (read-cost.ts)
 *
 * Prints a table (stdout), progress on stderr, writes reports/bench-<timestamp>.json.
 *
 *   npm run bench                               the full bench (the 100,000 scale point takes ~20 min)
 *   npm run bench -- --quick                    2–3 minutes: batch 10 × concurrency 5, one run, no scale
 *   npm run bench -- --scale 1000,10000         other scale points (--scale 0: none)
 *   npm run bench -- --read-cost 10,100         other numbers of entries per account (--read-cost 0: none)
 *   npm run bench -- --repetitions 5 --messages 1000
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Mode } from '../../contract/topology.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { DEFAULTS } from '../options/declaration.js';
import type { ParsedOptions } from '../options/parse.js';
import { type Finished, runEntryPoint } from '../options/run.js';
import { costPerMillion } from '../studies/benchmarks/cost-model.js';
import { type CellResult, type GridCell, runCell } from '../studies/benchmarks/end-to-end.js';
import { meteredRun } from '../studies/benchmarks/metered-run.js';
import { PRICES } from '../studies/benchmarks/prices.js';
import { PRODUCTION_SHAPES, productionName, YARDSTICK_MODE } from '../studies/benchmarks/production-shape.js';
import { measureReadCost, type ReadCostReport } from '../studies/benchmarks/read-cost.js';
import type { BenchReport, ProductionReport } from '../studies/benchmarks/report.js';
import { runScalePoint, type ScalePoint } from '../studies/benchmarks/scale.js';
import { priceRatio, ratiosOf, targetsOf } from '../studies/benchmarks/summary.js';
import { formatBench } from '../studies/benchmarks/table.js';

const FULL_GRID: readonly GridCell[] = [1, 10, 100].flatMap((batchSize) =>
  [2, 5].map((concurrency) => ({ batchSize, concurrency })),
);
const QUICK_GRID: readonly GridCell[] = [{ batchSize: 10, concurrency: 5 }];

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

async function main({ values }: ParsedOptions<'bench'>): Promise<Finished> {
  const { quick, repetitions, messages, modes } = values;
  const scaleSizes = values.scale.filter((size) => size > 0);
  const readCostSizes = values['read-cost'].filter((size) => size > 0);

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

  let readCost: ReadCostReport | undefined;
  if (readCostSizes.length > 0) {
    log(`read cost: entry-upsert's balance read at ${readCostSizes.join(', ')} entries per account`);
    await measureReadCost({
      entriesPerAccount: readCostSizes,
      accounts: DEFAULTS.accounts,
      repetitions: quick ? 3 : 5,
      log,
    }).then(
      (measured) => {
        readCost = measured;
        for (const point of measured.points) {
          for (const [reader, result] of Object.entries(point)) {
            if (typeof result === 'object' && !result.exact)
              failures.push(
                `read cost at ${point.entriesPerAccount} entries: ${reader} did not sum to the balance`,
              );
          }
        }
      },
      (error: unknown) =>
        failures.push(`read cost: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  const ratios = endToEnd.map(ratiosOf);
  const cost = Object.fromEntries(
    Object.entries(metered.modes).map(([mode, result]) => [
      mode,
      result ? costPerMillion(mode as Mode, result.usage) : undefined,
    ]),
  ) as BenchReport['cost'];
  const production: Partial<Record<Mode, ProductionReport>> = {};
  for (const [mode, measured] of Object.entries(metered.production) as [
    Mode,
    (typeof metered.production)[Mode],
  ][]) {
    const shape = PRODUCTION_SHAPES[mode];
    if (!measured || !shape) continue;
    const row: ProductionReport = {
      name: productionName(mode),
      writes: shape.writes,
      expectedWriteUnitsPerMessage: shape.writeUnitsPerMessage,
      usage: measured.usage,
      dynamodbByOperation: measured.run.dynamodbByOperation,
      reportedWriteUnits: measured.run.reportedWriteUnits,
      failedRecords: measured.run.failedRecords,
      money: measured.run.money,
      cost: costPerMillion(mode, measured.usage),
    };
    production[mode] = row;
    if (!row.money.exact)
      failures.push(
        `${row.name}: its balances add up to ${row.money.balanceCents} cents, not the ${row.money.expectedCents} sent (${row.failedRecords} records failed)`,
      );
  }
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
        'Write units are counted per request by the documented rules (harness/local-aws/dynamodb-proxy/write-units.ts: 1 per KB of each item, 2 per KB of each item in a transaction). DynamoDB Local also returns ConsumedCapacity when asked (the meter asks): it matches the rules for PutItem and UpdateItem but reports 2 instead of 4 for a transaction of two small items, so reportedWriteUnits is kept beside it, not billed.',
        'A cancelled TransactWriteItems (a duplicate in effectively-once) returns no ConsumedCapacity from DynamoDB Local; counted here as if billed like the write it was (2 units per KB of each item). No duplicates occur in these runs (no crashes), so this never changes the table.',
        'at-most-once deletes its batch from its own code; its SQS deletes are one DeleteMessageBatch per 10 records of each invocation, from its invocations.',
        'Lambda GB-seconds are the local billed durations × the topology memory: an upper bound for AWS (a shared 2-core machine, DynamoDB Local behind them).',
        "A production-shape row (harness/studies/benchmarks/production-shape.ts) is not a mode: the mode's core (packages/consumer-cores/src/) as a team builds it, with nothing of the lab around it, run in the bench process with synthetic batches through its own meter; checked by the money only (its balances against the money sent). Its DynamoDB is counted; its Lambda and SQS are its mode's from this run (the same queue, mapping and loop). at-least-once's (one UpdateItem ADD balanceCents) is the yardstick. Every mode's row has the delivery counter the verifier reads (one UpdateItem per batch: 0.1 WCU per message at batch 10); the production shapes have none.",
      ],
    },
    cost,
    production,
    effectivelyOnceOverYardstick: priceRatio(cost['effectively-once'], production[YARDSTICK_MODE]?.cost),
    ...(readCost ? { readCost } : {}),
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
  process.stdout.write(`${formatBench(report)}\n`);
  if (failures.length > 0) process.stderr.write(`bench: incomplete:\n  ${failures.join('\n  ')}\n`);
  return { exitCode: failures.length > 0 ? 1 : 0, report: path };
}

runEntryPoint('bench', main);

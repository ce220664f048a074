import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Mode } from '../../contract/topology.js';
import { OPTIONS } from '../../harness/options/declaration.js';
import { PRODUCTION_SHAPES } from '../../harness/studies/benchmarks/production-shape.js';
import type { BenchReport } from '../../harness/studies/benchmarks/report.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';

/**
 * The write units per message each mode's credit needs at least, in its instrumented shape (as the
 * experiment runs it, with what the verifier reads): a transaction of two small items is 4 (the
 * application record or marker beside the balance); Powertools adds its INPROGRESS and COMPLETED
 * writes; entry-upsert writes one item, its entry; state-upsert two, its state and the verifier's
 * record. A mode not listed writes at least one item per message. Each mode's production shape
 * (production-shape.ts) is held to its own declared units below.
 */
const MIN_WRITE_UNITS_PER_MESSAGE: Partial<Record<Mode, number>> = {
  // One UpdateItem per credit, its application added to it.
  'at-most-once': 1,
  'at-least-once': 1,
  'effectively-once': 4,
  'powertools-idempotency': 6,
  'powertools-message-id': 6,
  'entry-upsert': 1,
  'state-upsert': 2,
};

/** What `npm run bench -- --quick` measures: the bench's default modes and read-cost sizes. */
const BENCH_MODES = OPTIONS.modes.entryPoints.bench.default;
const READ_COST_SIZES = OPTIONS['read-cost'].entryPoints.bench.quick;

/**
 * Smoke test of `npm run bench -- --quick`: it runs, writes the report with every section, and the
 * numbers are sane. No timing thresholds: timings belong to the bench's output, not to tests.
 */
// Six modes, their production shapes and the read cost: about 2–3 minutes on the 2-core machine,
// longer than the project's default timeout for a run.
describe('npm run bench -- --quick', () => {
  it('writes reports/bench-<timestamp>.json with every section and prints the table', () => {
    const run = spawnSync(
      join(PROJECT_ROOT, 'node_modules/.bin/tsx'),
      [join(PROJECT_ROOT, 'harness/commands/run-bench.ts'), '--quick'],
      { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 380_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const path = /report: (\S+bench-\S+\.json)/.exec(run.stdout)?.[1];
    expect(path, run.stdout).toBeDefined();
    const report = JSON.parse(readFileSync(join(PROJECT_ROOT, path ?? ''), 'utf8')) as BenchReport;

    expect(report.kind).toBe('quick');
    expect(report.scale).toEqual([]);
    expect(report.failures).toEqual([]);
    expect(report.endToEnd).toHaveLength(1);
    expect(Object.keys(report.metered.modes).sort()).toEqual([...BENCH_MODES].sort());
    for (const mode of BENCH_MODES) {
      const cell = report.endToEnd[0]?.modes[mode];
      expect(cell?.exact, mode).toBe(true);
      expect(cell?.endToEnd.median, mode).toBeGreaterThan(0);
      expect(cell?.floor.median, mode).toBeGreaterThan(0);
      expect(report.ratios[0]?.endToEndOverFloor[mode], mode).toBeGreaterThan(0);

      const usage = report.metered.modes[mode]?.usage;
      // Every message is one credit: at least one DynamoDB request and the mode's write units.
      expect(usage?.dynamodb.requests, mode).toBeGreaterThanOrEqual(report.metered.messages);
      expect(usage?.dynamodb.writeUnits, mode).toBeGreaterThanOrEqual(
        (MIN_WRITE_UNITS_PER_MESSAGE[mode] ?? 1) * report.metered.messages,
      );
      expect(usage?.lambda.invocations, mode).toBeGreaterThan(0);
      expect(usage?.sqs.sendRequests, mode).toBeGreaterThan(0);
      expect(report.cost[mode]?.usdPerMillion.total, mode).toBeGreaterThan(0);
    }
    // Powertools writes its idempotency record twice (INPROGRESS, COMPLETED) besides the credit.
    expect(report.metered.modes['powertools-idempotency']?.usage.dynamodb.requests).toBeGreaterThan(
      report.metered.modes['effectively-once']?.usage.dynamodb.requests ?? Number.POSITIVE_INFINITY,
    );
    // Each mode with a production shape has its row, at its declared write units per message (and the
    // delivery counter's tenth; a superseded state's failed condition is billed like the write),
    // checked by the money. at-least-once's is the yardstick: the marker transaction costs more.
    const productionModes = BENCH_MODES.filter((mode) => PRODUCTION_SHAPES[mode]);
    expect(productionModes).toEqual(
      expect.arrayContaining(['at-least-once', 'effectively-once', 'state-upsert']),
    );
    expect(Object.keys(report.production).sort()).toEqual([...productionModes].sort());
    for (const mode of productionModes) {
      const row = report.production[mode];
      const units = PRODUCTION_SHAPES[mode]?.writeUnitsPerMessage ?? 0;
      expect(row?.money.exact, `${mode}: ${JSON.stringify(row?.money)}`).toBe(true);
      expect(row?.usage.dynamodb.writeUnits, mode).toBeGreaterThanOrEqual(units * report.metered.messages);
      expect(row?.usage.dynamodb.writeUnits, mode).toBeLessThan((units + 0.5) * report.metered.messages);
      // Cheaper than the mode as the experiment runs it: the verifier's writes are gone.
      expect(row?.cost.perMessage.writeUnits, mode).toBeLessThan(
        report.cost[mode]?.perMessage.writeUnits ?? 0,
      );
      expect(run.stdout, mode).toMatch(
        // One request per message; the write units the shape declares (no delivery counter).
        new RegExp(`\\n${mode} \\(production shape\\) +1(\\.\\d+)? +${units}(\\.\\d+)? `),
      );
    }
    expect(report.effectivelyOnceOverYardstick?.writeUnits).toBeGreaterThan(3);
    // entry-upsert's read side: a balance read at each size, against one GetItem of a balance item.
    const readCost = report.readCost;
    const accounts = readCost?.accounts ?? 0;
    expect(readCost?.points.map((point) => point.entriesPerAccount)).toEqual(READ_COST_SIZES);
    for (const point of readCost?.points ?? []) {
      const size = point.entriesPerAccount;
      expect(point.balanceItem, String(size)).toMatchObject({
        readUnitsEventual: 0.5,
        readUnitsStrong: 1,
        requests: 1,
        exact: true,
      });
      // Today's keys read every account's entries; keyed by account, the account's only.
      expect(point.entriesFiltered, String(size)).toMatchObject({
        itemsRead: size * accounts,
        itemsReturned: size,
        exact: true,
      });
      expect(point.entriesByAccount, String(size)).toMatchObject({
        itemsRead: size,
        itemsReturned: size,
        exact: true,
      });
      expect(point.entriesFiltered.readUnitsStrong, String(size)).toBeGreaterThan(
        point.entriesByAccount.readUnitsStrong,
      );
      expect(point.entriesByAccount.readUnitsStrong, String(size)).toBeGreaterThanOrEqual(1);
    }
    expect(run.stdout).toContain('read cost of ONE balance');
    expect(report.metered.cancelledTransaction.cancellationCode).toMatch(/^ConditionalCheckFailed/);
    expect(report.prices.region).toBe('us-east-1');
    expect(report.targets.length).toBeGreaterThan(0);
    expect(run.stdout).toContain('end to end');
    // The table (its arithmetic is unit-tested in test/unit/harness/studies/benchmarks/): a throughput row
    // and a cost row per mode, and the report's path last.
    for (const mode of BENCH_MODES) {
      expect(run.stdout, mode).toMatch(new RegExp(`\\n +10 +5  ${mode} +[0-9.]+ `));
      expect(run.stdout, mode).toMatch(new RegExp(`\\n${mode} +[0-9.]+ `));
    }
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(`report: ${path}`);
  }, 400_000);
});

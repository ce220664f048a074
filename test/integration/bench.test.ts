import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODES, type Mode } from '../../contract/topology.js';
import type { BenchReport } from '../../harness/benchmarks/report.js';
import { PROJECT_ROOT } from '../../lib/bundling.js';

/**
 * The write units per message each mode's credit needs at least, in its instrumented shape: a
 * transaction of two small items is 4 (the application record or marker beside the balance);
 * Powertools adds its INPROGRESS and COMPLETED writes; entry-upsert writes one item. A mode not
 * listed writes at least one item per message.
 */
const MIN_WRITE_UNITS_PER_MESSAGE: Partial<Record<Mode, number>> = {
  'at-most-once': 4,
  'at-least-once': 4,
  'effectively-once': 4,
  'powertools-idempotency': 6,
  'powertools-message-id': 6,
  'entry-upsert': 1,
};

/**
 * Smoke test of `npm run bench -- --quick`: it runs, writes the report with every section, and the
 * numbers are sane. No timing thresholds: timings belong to the bench's output, not to tests.
 */
describe('npm run bench -- --quick', () => {
  it('writes reports/bench-<timestamp>.json with every section and prints the table', () => {
    const run = spawnSync(
      join(PROJECT_ROOT, 'node_modules/.bin/tsx'),
      [join(PROJECT_ROOT, 'harness/benchmarks/run-bench.ts'), '--quick'],
      { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 230_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const path = /report: (\S+bench-\S+\.json)/.exec(run.stdout)?.[1];
    expect(path, run.stdout).toBeDefined();
    const report = JSON.parse(readFileSync(join(PROJECT_ROOT, path ?? ''), 'utf8')) as BenchReport;

    expect(report.kind).toBe('quick');
    expect(report.scale).toEqual([]);
    expect(report.failures).toEqual([]);
    expect(report.endToEnd).toHaveLength(1);
    for (const mode of DEFAULT_MODES) {
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
    // The yardstick, at-least-once in its production shape: one write unit per message (and the
    // delivery counter's tenth), checked by the money; effectively-once's transaction costs more.
    const yardstick = report.yardstick;
    expect(yardstick?.money.exact, JSON.stringify(yardstick?.money)).toBe(true);
    expect(yardstick?.usage.dynamodb.writeUnits).toBeGreaterThanOrEqual(report.metered.messages);
    expect(yardstick?.usage.dynamodb.writeUnits).toBeLessThan(2 * report.metered.messages);
    expect(yardstick?.effectivelyOnceOverYardstick?.writeUnits).toBeGreaterThan(3);
    expect(run.stdout).toMatch(/\nat-least-once \(production shape\) +1\.\d* +1\.\d* /);
    expect(report.metered.cancelledTransaction.cancellationCode).toMatch(/^ConditionalCheckFailed/);
    expect(report.prices.region).toBe('us-east-1');
    expect(report.targets.length).toBeGreaterThan(0);
    expect(run.stdout).toContain('end to end');
    // The table (its arithmetic is unit-tested in test/unit/harness/benchmarks/): a throughput row
    // and a cost row per mode, and the report's path last.
    for (const mode of DEFAULT_MODES) {
      expect(run.stdout, mode).toMatch(new RegExp(`\\n +10 +5  ${mode} +[0-9.]+ `));
      expect(run.stdout, mode).toMatch(new RegExp(`\\n${mode} +[0-9.]+ `));
    }
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(`report: ${path}`);
  });
});

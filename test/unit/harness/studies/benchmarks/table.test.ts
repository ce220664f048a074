import { describe, expect, it } from 'vitest';
import type { Mode } from '../../../../../contract/topology.js';
import { costPerMillion, type ModeUsage } from '../../../../../harness/studies/benchmarks/cost-model.js';
import type { CellModeResult } from '../../../../../harness/studies/benchmarks/end-to-end.js';
import { PRICES } from '../../../../../harness/studies/benchmarks/prices.js';
import { PRODUCTION_SHAPES } from '../../../../../harness/studies/benchmarks/production-shape.js';
import type { ReadCostReport } from '../../../../../harness/studies/benchmarks/read-cost.js';
import type { BenchReport, ProductionReport } from '../../../../../harness/studies/benchmarks/report.js';
import { spread } from '../../../../../harness/studies/benchmarks/spread.js';
import { priceRatio, ratiosOf, targetsOf } from '../../../../../harness/studies/benchmarks/summary.js';
import { formatBench, formatReadCost } from '../../../../../harness/studies/benchmarks/table.js';

const result = (endToEnd: number[], floor: number[], exact = true): CellModeResult => ({
  endToEnd: spread(endToEnd),
  floor: spread(floor),
  exact,
  visibilityOverruns: 0,
});

const usage = (writeUnits: number, requests: number): ModeUsage => ({
  messages: 100,
  lambda: { invocations: 10, billedDurationMs: 4000 },
  sqs: { sendRequests: 10, receiveRequests: 10, emptyReceives: 3, deleteRequests: 10 },
  dynamodb: { requests, writeUnits, readUnits: 0 },
});

const USAGE: Partial<Record<Mode, ModeUsage>> = {
  'at-least-once': usage(400, 100),
  'effectively-once': usage(400, 100),
};

function report(overrides: Partial<BenchReport> = {}): BenchReport {
  const endToEnd = [
    {
      batchSize: 10,
      concurrency: 5,
      batchingWindowSeconds: 0,
      messages: 200,
      repetitions: 3,
      modes: {
        'at-least-once': result([100, 80, 120], [200, 190, 210]),
        'effectively-once': result([90, 85, 95], [100, 100, 100], false),
      },
    },
  ];
  const ratios = endToEnd.map(ratiosOf);
  return {
    kind: 'quick',
    startedAt: '2026-11-30T09:00:00.000Z',
    durationSeconds: 95,
    machine: { cpus: 2, cpuModel: 'Test CPU', node: 'v20.19.0', platform: 'linux' },
    endToEnd,
    ratios,
    metered: {
      messages: 100,
      modes: Object.fromEntries(
        Object.entries(USAGE).map(([mode, used]) => [
          mode,
          { usage: used, dynamodbByOperation: {}, reportedWriteUnits: 0 },
        ]),
      ),
      cancelledTransaction: {
        consumedCapacityReported: false,
        cancellationCode: 'ConditionalCheckFailed,None',
        ruleWriteUnits: 4,
      },
      notes: [],
    },
    cost: Object.fromEntries(
      Object.entries(USAGE).map(([mode, used]) => [mode, costPerMillion(mode as Mode, used)]),
    ),
    production: {},
    effectivelyOnceOverYardstick: null,
    prices: PRICES,
    scale: [],
    targets: targetsOf(ratios, []),
    failures: [],
    ...overrides,
  };
}

/** The line that starts with `start` (after leading spaces), whitespace-split. */
function row(lines: readonly string[], start: string): string[] {
  const line = lines.find((candidate) => candidate.trimStart().startsWith(start));
  if (line === undefined) throw new Error(`no line starting with ${start}:\n${lines.join('\n')}`);
  return line.trim().split(/\s+/);
}

/** Where each header label ends: right-aligned values end at the same column. */
function labelEnds(header: string, labels: readonly string[]): number[] {
  let from = 0;
  return labels.map((label) => {
    const at = header.indexOf(label, from);
    if (at < 0) throw new Error(`no column ${label} in ${header}`);
    from = at + label.length;
    return from;
  });
}

/** Where each whitespace-separated value of a line ends. */
function valueEnds(line: string): number[] {
  return [...line.matchAll(/\S+/g)].map((match) => (match.index ?? 0) + match[0].length);
}

describe('the bench table (stdout)', () => {
  it('names the kind, the machine and the start', () => {
    const [first] = formatBench(report()).split('\n');
    expect(first).toBe('bench quick — 2 CPUs (Test CPU), Node v20.19.0, 2026-11-30T09:00:00.000Z');
  });

  it('prints a throughput row per mode: medians, min–max, end to end ÷ floor, exactness', () => {
    const lines = formatBench(report()).split('\n');
    const header = lines.find((line) => line.includes('e2e÷floor')) ?? '';
    const columns = [
      'batch',
      'conc',
      'mode',
      'end to end',
      'spread',
      'floor',
      'spread',
      'e2e÷floor',
      'exact',
    ];
    expect(labelEnds(header, columns)).toHaveLength(columns.length);

    expect(row(lines, '10    5  at-least-once')).toEqual([
      '10',
      '5',
      'at-least-once',
      '100',
      '80–120',
      '200',
      '190–210',
      '0.5',
      'yes',
    ]);
    expect(row(lines, '10    5  effectively-once')).toEqual([
      '10',
      '5',
      'effectively-once',
      '90',
      '85–95',
      '100',
      '100–100',
      '0.9',
      'NO',
    ]);
    // Right-aligned under their labels (mode is left-aligned, exact is free).
    const line =
      lines.find((candidate) => candidate.includes('at-least-once') && candidate.includes('–')) ?? '';
    const ends = labelEnds(header, columns);
    const values = valueEnds(line);
    for (const index of [0, 1, 3, 4, 5, 6, 7]) expect(values[index], columns[index]).toBe(ends[index]);
    expect(line.indexOf('at-least-once')).toBe(header.indexOf('mode'));
    expect(lines).toContain(
      '           effectively-once ÷ at-least-once 0.9, powertools-idempotency ÷ effectively-once not measured (powertools-idempotency was not run)',
    );
  });

  it('prints per-message counts and dollars per million from the cost model, under their columns', () => {
    const lines = formatBench(report()).split('\n');
    expect(lines).toContain(
      'per message (metered run: 100 messages per mode, batch 10, concurrency 5) and US$ per million messages (us-east-1, on-demand, prices read 2026-11)',
    );
    const header = lines.find((line) => line.includes('total $')) ?? '';
    const columns = [
      'mode',
      'ddb req',
      'WCU',
      'RCU',
      'λ req',
      'λ GB-s',
      'SQS req',
      'λ $',
      'SQS $',
      'DDB $',
      'total $',
    ];
    const ends = labelEnds(header, columns);

    // 100 messages: 4 WCU and 1 request each, 0.1 invocations, 4 s × 0.25 GB / 100 = 0.01 GB-s,
    // 0.3 SQS requests (empty receives left out); $2.50 of DynamoDB, $0.153 of Lambda, $0.12 of SQS.
    const line = lines.find((candidate) => candidate.startsWith('effectively-once ')) ?? '';
    expect(line.trim().split(/\s+/)).toEqual([
      'effectively-once',
      '1',
      '4',
      '0',
      '0.1',
      '0.01',
      '0.3',
      '0.15',
      '0.12',
      '2.50',
      '2.77',
    ]);
    const values = valueEnds(line);
    for (let index = 1; index < columns.length; index += 1)
      expect(values[index], columns[index]).toBe(ends[index]);
    // One cost row per metered mode (the throughput rows start with the batch size).
    expect(lines.filter((candidate) => /^[a-z-]+ +\d/.test(candidate)).map((c) => c.split(' ')[0])).toEqual([
      'at-least-once',
      'effectively-once',
    ]);
  });

  it('says how the cancelled transaction was counted', () => {
    expect(formatBench(report())).toContain(
      'a cancelled (duplicate) transaction: DynamoDB Local reports no consumed capacity (ConditionalCheckFailed,None); counted by the rules as 4 WCU',
    );
    const reported = report({
      metered: {
        ...report().metered,
        cancelledTransaction: { consumedCapacityReported: true, cancellationCode: 'X', ruleWriteUnits: 4 },
      },
    });
    expect(formatBench(reported)).toContain('DynamoDB Local reports its consumed capacity (X)');
  });

  it('prints the scale section only when there are scale points: seconds per 1,000 messages and peak memory', () => {
    expect(formatBench(report())).not.toContain('scale, effectively-once alone');

    const text = formatBench(
      report({
        scale: [
          {
            messages: 10_000,
            wallSeconds: 75.25,
            runSeconds: 50,
            throughputPerSecond: 200,
            exact: true,
            peakRssKb: { experiment: 300 * 1024, verifier: 100 * 1024 + 400, dynamodbLocal: undefined },
          },
        ],
      }),
    );
    const lines = text.split('\n');
    expect(lines).toContain(
      'scale, effectively-once alone (batch 10, concurrency 5), each size in a fresh process:',
    );
    expect(row(lines, '10,000')).toEqual([
      '10,000',
      '75.3',
      '50.0',
      '200',
      '5.00',
      '300',
      'MB',
      '100',
      'MB',
      'n/a',
      'yes',
    ]);
  });

  it('lists the targets, met or MISSED, last (the runner prints the report path after them)', () => {
    const lines = formatBench(report()).split('\n');
    const targets = lines.slice(lines.indexOf('targets:') + 1);
    expect(targets).toEqual([
      '  MISSED at-least-once end to end ≥ 60% of its floor (batch 10, concurrency 5): 50%',
      '  met    effectively-once end to end ≥ 60% of its floor (batch 10, concurrency 5): 90%',
      '  met    effectively-once ≥ 85% of at-least-once (batch 10, concurrency 5): 90%',
    ]);
  });

  it('prints no number for a ratio or target whose modes were not measured, and says which was not run', () => {
    const endToEnd = [
      {
        batchSize: 10,
        concurrency: 5,
        batchingWindowSeconds: 0,
        messages: 200,
        repetitions: 1,
        modes: { 'effectively-once': result([90], [100]) },
      },
    ];
    const ratios = endToEnd.map(ratiosOf);
    const lines = formatBench(report({ endToEnd, ratios, targets: targetsOf(ratios, []) })).split('\n');
    expect(lines).toContain(
      '           effectively-once ÷ at-least-once not measured (at-least-once was not run), ' +
        'powertools-idempotency ÷ effectively-once not measured (powertools-idempotency was not run)',
    );
    expect(lines.slice(lines.indexOf('targets:') + 1)).toEqual([
      '  met    effectively-once end to end ≥ 60% of its floor (batch 10, concurrency 5): 90%',
      '  n/a    effectively-once ≥ 85% of at-least-once (batch 10, concurrency 5): not measured (at-least-once was not run)',
    ]);
    expect(lines.join('\n')).not.toMatch(/MISSED|÷ at-least-once 0/);
  });

  const productionRow = (
    mode: Mode,
    used: ModeUsage,
    money = { expectedCents: 5000, balanceCents: 5000, exact: true },
  ): ProductionReport => ({
    name: `${mode} (production shape)`,
    writes: PRODUCTION_SHAPES[mode]?.writes ?? '',
    expectedWriteUnitsPerMessage: 1,
    usage: used,
    dynamodbByOperation: {},
    reportedWriteUnits: used.dynamodb.writeUnits,
    failedRecords: 0,
    money,
    cost: costPerMillion(mode, used),
  });

  it("prints each production row under its mode's row, same columns, with its money check and the honest ratio", () => {
    const yardstick = productionRow('at-least-once', usage(110, 110));
    const withProduction = report({
      production: { 'at-least-once': yardstick },
      effectivelyOnceOverYardstick: priceRatio(
        costPerMillion('effectively-once', usage(400, 100)),
        yardstick.cost,
      ),
    });
    const lines = formatBench(withProduction).split('\n');
    const header = lines.find((line) => line.includes('total $')) ?? '';
    const at = lines.indexOf(header);
    expect(lines[at + 1]?.startsWith('at-least-once ')).toBe(true);
    const production = lines[at + 2] ?? '';
    expect(production.startsWith('at-least-once (production shape) ')).toBe(true);
    expect(lines[at + 3]?.startsWith('effectively-once ')).toBe(true);
    // 1.1 WCU: $0.69 of DynamoDB against effectively-once's $2.50.
    expect(production.slice('at-least-once (production shape)'.length).trim().split(/\s+/)).toEqual([
      '1.1',
      '1.1',
      '0',
      '0.1',
      '0.01',
      '0.3',
      '0.15',
      '0.12',
      '0.69',
      '0.96',
    ]);
    const ends = labelEnds(header, ['mode', 'ddb req', 'WCU', 'total $']);
    expect(valueEnds(production).at(-1)).toBe(ends[3]);
    const modeRow = lines.find((candidate) => candidate.startsWith('effectively-once ')) ?? '';
    expect(valueEnds(modeRow).at(-1)).toBe(ends[3]);
    expect(lines).toContain(
      "at-least-once (production shape): one UpdateItem (ADD balanceCents) per message; checked by the money only: balances 5000 of 5000 cents sent (exact); its Lambda and SQS are its mode's",
    );
    // 4 ÷ 1.1 and 2.77 ÷ 0.96.
    expect(lines).toContain(
      'effectively-once ÷ at-least-once (production shape): 3.64× the write units, 2.89× the US$',
    );
  });

  it('prints a production row for every mode that has one (state-upsert beside at-least-once)', () => {
    const text = formatBench(
      report({
        metered: { ...report().metered },
        cost: {
          ...report().cost,
          'state-upsert': costPerMillion('state-upsert', usage(210, 210)),
        },
        production: {
          'at-least-once': productionRow('at-least-once', usage(110, 110)),
          'state-upsert': productionRow('state-upsert', usage(110, 110)),
        },
      }),
    );
    const lines = text.split('\n');
    const at = lines.findIndex((line) => line.startsWith('state-upsert '));
    expect(row(lines, 'state-upsert ').slice(1, 3)).toEqual(['2.1', '2.1']);
    expect(lines[at + 1]?.startsWith('state-upsert (production shape) ')).toBe(true);
    expect(row(lines, 'state-upsert (production shape)').slice(3, 5)).toEqual(['1.1', '1.1']);
    expect(text).toContain(
      'state-upsert (production shape): one conditional UpdateItem (SET balanceCents, version) per message; checked by the money only',
    );
  });

  it('prints no production rows when none was measured, and no honest ratio without effectively-once', () => {
    expect(formatBench(report())).not.toContain('production shape');
    const text = formatBench(
      report({
        production: {
          'at-least-once': productionRow('at-least-once', usage(100, 100), {
            expectedCents: 1,
            balanceCents: 2,
            exact: false,
          }),
        },
      }),
    );
    expect(text).toContain('balances 2 of 1 cents sent (NOT EXACT)');
    expect(text).toContain(
      'effectively-once ÷ at-least-once (production shape): not measured (effectively-once was not run)',
    );
  });
});

describe('the read-cost table', () => {
  const measured = (itemsRead: number, requests: number, eventual: number, strong: number, ms: number) => ({
    itemsRead,
    itemsReturned: itemsRead,
    requests,
    readUnitsEventual: eventual,
    readUnitsStrong: strong,
    ms: { median: ms, min: ms, max: ms },
    exact: true,
  });
  const readCost: ReadCostReport = {
    accounts: 10,
    entryBytes: 250,
    repetitions: 3,
    setupSeconds: 1,
    notes: [],
    points: [
      {
        entriesPerAccount: 10_000,
        accounts: 10,
        balanceItem: measured(1, 1, 0.5, 1, 4),
        entriesFiltered: { ...measured(100_000, 3, 3050, 6100, 2500), itemsReturned: 10_000 },
        entriesByAccount: measured(10_000, 1, 305, 610, 300),
      },
    ],
  };

  it('prints one row per reader and size, AWS pages by 1 MB read, and the ratio at the largest size', () => {
    const lines = formatReadCost(readCost);
    expect(row(lines, '10,000  balance item')).toEqual([
      '10,000',
      'balance',
      'item:',
      'GetItem',
      '1',
      '1',
      '1',
      '0.5',
      '1',
      '4.0',
      'yes',
    ]);
    // 100,000 entries × 250 B = 24 MB read: 24 pages on AWS, though DynamoDB Local answered in 3.
    expect(row(lines, "10,000  today's keys").slice(-7)).toEqual([
      '100,000',
      '3',
      '24',
      '3050',
      '6100',
      '2500.0',
      'yes',
    ]);
    expect(row(lines, '10,000  keyed by account').slice(-7)).toEqual([
      '10,000',
      '1',
      '3',
      '305',
      '610',
      '300.0',
      'yes',
    ]);
    expect(lines.at(-1)).toBe(
      "at 10,000 entries per account one balance read costs 6,100× a balance item's read units with today's keys, 610× keyed by account",
    );
  });

  it('is printed by the bench table when measured', () => {
    expect(formatBench(report({ readCost }))).toContain('read cost of ONE balance');
    expect(formatBench(report())).not.toContain('read cost of ONE balance');
  });
});

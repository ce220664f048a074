/** The bench's figures in the docs: throughput and cost per mode, the README's short form, the production shapes. */
import { DEFAULT_MODES, type Mode } from '../../../contract/topology.js';
import type { ModeCost } from '../benchmarks/cost-model.js';
import { YARDSTICK_MODE } from '../benchmarks/production-shape.js';
import type { BenchReport } from '../benchmarks/report.js';
import { markdownTable } from './markdown.js';

/** The bench's report as its summary keeps it: all but the scale points and the read cost, which no table here shows. */
export type BenchFigures = Omit<BenchReport, 'scale' | 'readCost' | 'targets'>;

export function benchFiguresOf(report: BenchReport): BenchFigures {
  const { scale: _scale, readCost: _readCost, targets: _targets, ...figures } = report;
  return figures;
}

/** The grid cell the docs quote: batch 10, concurrency 5 (the topology's batch, the bench's higher concurrency). */
const QUOTED = { batchSize: 10, concurrency: 5 } as const;

function quotedCell(report: BenchFigures) {
  const cell = report.endToEnd.find(
    (c) => c.batchSize === QUOTED.batchSize && c.concurrency === QUOTED.concurrency,
  );
  if (cell === undefined) throw new Error('the bench report has no cell at batch 10, concurrency 5');
  return cell;
}

const usd = (value: number) => value.toFixed(2);
const msgPerSecond = (value: number | undefined) => (value === undefined ? '–' : String(Math.round(value)));
const perMessage = (value: number) => value.toFixed(2);

/** Per mode: end to end against its floor, then what a message costs (the metered run). */
export function throughputCostTable(report: BenchFigures): string {
  const cell = quotedCell(report);
  const ratios = report.ratios.find(
    (r) => r.batchSize === QUOTED.batchSize && r.concurrency === QUOTED.concurrency,
  );
  const rows = (Object.entries(cell.modes) as [Mode, NonNullable<(typeof cell.modes)[Mode]>][]).map(
    ([mode, result]) => {
      const cost = report.cost[mode];
      return [
        mode,
        `${Math.round(result.endToEnd.median)} (${Math.round(result.endToEnd.min)}–${Math.round(result.endToEnd.max)})`,
        String(Math.round(result.floor.median)),
        ratios?.endToEndOverFloor[mode]?.toFixed(2) ?? '–',
        cost ? perMessage(cost.perMessage.dynamodbRequests) : '–',
        cost ? perMessage(cost.perMessage.writeUnits) : '–',
        cost ? usd(cost.usdPerMillion.total) : '–',
        result.exact ? 'yes' : '**NO**',
      ];
    },
  );
  return markdownTable(
    [
      'mode',
      'end to end msg/s, median (min–max)',
      'floor msg/s',
      'e2e ÷ floor',
      'DynamoDB requests / msg',
      'WCU / msg',
      'US$ / million messages (Lambda + SQS + DynamoDB)',
      'exact',
    ],
    rows,
  );
}

/** The README's: the default run's modes, and the yardstick. */
export function readmeCostTable(report: BenchFigures): string {
  const cell = quotedCell(report);
  const costCells = (cost: ModeCost | undefined) =>
    cost
      ? [
          perMessage(cost.perMessage.dynamodbRequests),
          perMessage(cost.perMessage.writeUnits),
          usd(cost.usdPerMillion.total),
        ]
      : ['–', '–', '–'];
  const rows = DEFAULT_MODES.filter((mode) => cell.modes[mode] !== undefined).map((mode) => [
    mode,
    msgPerSecond(cell.modes[mode]?.endToEnd.median),
    ...costCells(report.cost[mode]),
  ]);
  const yardstick = report.production[YARDSTICK_MODE];
  if (yardstick)
    rows.push([`*${yardstick.name}, the yardstick*`, '— (not a mode)', ...costCells(yardstick.cost)]);
  return markdownTable(
    ['mode', 'end to end msg/s', 'DynamoDB requests / msg', 'WCU / msg', 'US$ / million messages'],
    rows,
  );
}

/** Each mode that has a production shape, beside its shape: what the lab's records add to the price. */
export function productionShapeTable(report: BenchFigures): string {
  const cell = quotedCell(report);
  const row = (name: string, writes: string, cost: ModeCost, throughput: string) => [
    name,
    writes,
    perMessage(cost.perMessage.dynamodbRequests),
    perMessage(cost.perMessage.writeUnits),
    perMessage(cost.perMessage.sqsRequests),
    usd(cost.usdPerMillion.sqs),
    usd(cost.usdPerMillion.dynamodb),
    usd(cost.usdPerMillion.total),
    throughput,
  ];
  const rows = (Object.entries(report.cost) as [Mode, ModeCost][]).flatMap(([mode, cost]) => {
    const shape = report.production[mode];
    return [
      row(
        mode,
        shape ? "the lab's (its verifier's records with it)" : "the lab's (no production shape of its own)",
        cost,
        msgPerSecond(cell.modes[mode]?.endToEnd.median),
      ),
      ...(shape ? [row(`**${shape.name}**`, shape.writes, shape.cost, '— (not a mode)')] : []),
    ];
  });
  return markdownTable(
    [
      'row',
      'what it writes per message',
      'DynamoDB requests / msg',
      'WCU / msg',
      'SQS requests / msg',
      'US$ / million: SQS',
      'US$ / million: DynamoDB',
      'US$ / million: total',
      'end to end msg/s',
    ],
    rows,
  );
}

/** The cores as a team runs them (their production shapes) beside the yardstick: docs/modes.md's. */
export function coreCostTable(report: BenchFigures): string {
  const rows = (
    Object.entries(report.production) as [Mode, NonNullable<BenchFigures['production'][Mode]>][]
  ).map(([mode, shape]) => [
    mode === YARDSTICK_MODE ? `${mode} (the yardstick)` : mode,
    shape.writes,
    perMessage(shape.cost.perMessage.dynamodbRequests),
    `**${perMessage(shape.cost.perMessage.writeUnits)}**`,
    `**${usd(shape.cost.usdPerMillion.total)}**`,
  ]);
  return markdownTable(
    [
      'core (production shape)',
      'what it writes per message',
      'DynamoDB requests / msg',
      'WCU / msg',
      'US$ / million messages',
    ],
    rows,
  );
}

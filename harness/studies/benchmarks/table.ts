import type { Mode } from '../../../contract/topology.js';
import type { ModeCost } from './cost-model.js';
import { YARDSTICK_MODE } from './production-shape.js';
import type { ReadCostReport } from './read-cost.js';
import type { BenchReport } from './report.js';
import { MODE_RATIOS, modeRatioText, targetsNotMeasured } from './summary.js';

const pad = (text: string | number, width: number) => String(text).padStart(width);
const range = (s: { min: number; max: number }) => `${s.min}–${s.max}`;
const mb = (kb: number | undefined) => (kb === undefined ? 'n/a' : `${Math.round(kb / 1024)} MB`);

/** The bench's human-readable summary (stdout); the runner prints the report's path after it. */
export function formatBench(report: BenchReport): string {
  const lines: string[] = [];
  lines.push(
    `bench ${report.kind} — ${report.machine.cpus} CPUs (${report.machine.cpuModel}), Node ${report.machine.node}, ${report.startedAt}`,
  );
  lines.push('');
  lines.push(
    'throughput, messages/s: end to end (median, min–max) vs floor (same handler code straight at DynamoDB Local)',
  );
  lines.push(
    `${'batch'.padStart(5)} ${'conc'.padStart(4)}  ${'mode'.padEnd(22)} ${'end to end'.padStart(10)} ${'spread'.padStart(13)} ${'floor'.padStart(8)} ${'spread'.padStart(13)} ${'e2e÷floor'.padStart(9)}  exact`,
  );
  for (const cell of report.endToEnd) {
    for (const [mode, result] of Object.entries(cell.modes)) {
      if (!result) continue;
      lines.push(
        `${pad(cell.batchSize, 5)} ${pad(cell.concurrency, 4)}  ${mode.padEnd(22)} ${pad(result.endToEnd.median, 10)} ${pad(range(result.endToEnd), 13)} ${pad(result.floor.median, 8)} ${pad(range(result.floor), 13)} ${pad(report.ratios.find((r) => r.batchSize === cell.batchSize && r.concurrency === cell.concurrency)?.endToEndOverFloor[mode as Mode] ?? 0, 9)}  ${result.exact ? 'yes' : 'NO'}`,
      );
    }
    const r = report.ratios.find((x) => x.batchSize === cell.batchSize && x.concurrency === cell.concurrency);
    if (r)
      lines.push(
        `${''.padStart(11)}${MODE_RATIOS.map((which) => `${which.numerator} ÷ ${which.denominator} ${modeRatioText(r, which)}`).join(', ')}`,
      );
  }
  lines.push('');
  lines.push(
    `per message (metered run: ${report.metered.messages} messages per mode, batch 10, concurrency 5) and US$ per million messages (${report.prices.region}, on-demand, prices read ${report.prices.readOn})`,
  );
  const production = Object.values(report.production);
  // Wide enough for the production rows' names.
  const width = Math.max(22, ...production.map((row) => (row ? row.name.length : 0)));
  const name = (text: string) => text.padEnd(width);
  const costRow = (label: string, cost: ModeCost) => {
    const p = cost.perMessage;
    const u = cost.usdPerMillion;
    return `${name(label)} ${pad(p.dynamodbRequests, 7)} ${pad(p.writeUnits, 6)} ${pad(p.readUnits, 6)} ${pad(p.lambdaRequests, 6)} ${pad(p.lambdaGbSeconds, 8)} ${pad(p.sqsRequests, 7)}  ${pad(u.lambda.toFixed(2), 7)} ${pad(u.sqs.toFixed(2), 7)} ${pad(u.dynamodb.toFixed(2), 7)} ${pad(u.total.toFixed(2), 8)}`;
  };
  lines.push(
    `${name('mode')} ${'ddb req'.padStart(7)} ${'WCU'.padStart(6)} ${'RCU'.padStart(6)} ${'λ req'.padStart(6)} ${'λ GB-s'.padStart(8)} ${'SQS req'.padStart(7)}  ${'λ $'.padStart(7)} ${'SQS $'.padStart(7)} ${'DDB $'.padStart(7)} ${'total $'.padStart(8)}`,
  );
  // Each mode as the experiment runs it, then its production shape (without the verifier's records).
  for (const [mode, cost] of Object.entries(report.cost)) {
    if (cost) lines.push(costRow(mode, cost));
    const row = report.production[mode as Mode];
    if (row) lines.push(costRow(row.name, row.cost));
  }
  for (const row of production) {
    if (!row) continue;
    const money = row.money;
    lines.push(
      `${row.name}: ${row.writes}; checked by the money only: balances ${money.balanceCents} of ${money.expectedCents} cents sent (${money.exact ? 'exact' : 'NOT EXACT'}); its Lambda and SQS are its mode's`,
    );
  }
  const yardstick = report.production[YARDSTICK_MODE];
  const over = report.effectivelyOnceOverYardstick;
  if (yardstick)
    lines.push(
      over
        ? `effectively-once ÷ ${yardstick.name}: ${over.writeUnits}× the write units, ${over.usd}× the US$`
        : `effectively-once ÷ ${yardstick.name}: not measured (effectively-once was not run)`,
    );
  const c = report.metered.cancelledTransaction;
  lines.push(
    `a cancelled (duplicate) transaction: DynamoDB Local reports ${c.consumedCapacityReported ? 'its' : 'no'} consumed capacity (${c.cancellationCode}); counted by the rules as ${c.ruleWriteUnits} WCU`,
  );
  if (report.readCost) lines.push('', ...formatReadCost(report.readCost));
  if (report.scale.length > 0) {
    lines.push('');
    lines.push('scale, effectively-once alone (batch 10, concurrency 5), each size in a fresh process:');
    lines.push(
      `${'messages'.padStart(9)} ${'wall s'.padStart(8)} ${'run s'.padStart(8)} ${'msg/s'.padStart(7)} ${'s per 1k'.padStart(8)}  ${'experiment'.padStart(10)} ${'verifier'.padStart(9)} ${'DDB Local'.padStart(10)}  exact`,
    );
    for (const point of report.scale) {
      lines.push(
        `${pad(point.messages.toLocaleString('en-US'), 9)} ${pad(point.wallSeconds.toFixed(1), 8)} ${pad(point.runSeconds.toFixed(1), 8)} ${pad(point.throughputPerSecond, 7)} ${pad(((point.runSeconds / point.messages) * 1000).toFixed(2), 8)}  ${pad(mb(point.peakRssKb.experiment), 10)} ${pad(mb(point.peakRssKb.verifier), 9)} ${pad(mb(point.peakRssKb.dynamodbLocal), 10)}  ${point.exact ? 'yes' : 'NO'}`,
      );
    }
  }
  lines.push('');
  lines.push('targets:');
  for (const target of report.targets)
    lines.push(`  ${target.met ? 'met   ' : 'MISSED'} ${target.name}: ${target.measured}`);
  for (const target of targetsNotMeasured(report.ratios))
    lines.push(`  n/a    ${target.name}: ${target.measured}`);
  return lines.join('\n');
}

/**
 * entry-upsert's balance read as entries grow (read-cost.ts): per size, a balance item's GetItem,
 * the Query today's keys allow (every entry of the run read, filtered to the account) and a Query of
 * entries keyed by account. RCU as DynamoDB Local reported them; pages as it answered, and as AWS
 * would (1 MB read per page); ms strongly consistent, median.
 */
export function formatReadCost(readCost: ReadCostReport): string[] {
  const lines = [
    `read cost of ONE balance (entry-upsert: the sum of an account's entries; ${readCost.accounts} accounts, entries of ${readCost.entryBytes} B as entry-upsert writes them), DynamoDB Local, ms median of ${readCost.repetitions}`,
    `${'entries/acct'.padStart(12)}  ${'reader'.padEnd(44)} ${'items read'.padStart(10)} ${'pages'.padStart(5)} ${'AWS pages'.padStart(9)} ${'RCU eventual'.padStart(12)} ${'RCU strong'.padStart(10)} ${'ms'.padStart(8)}  exact`,
  ];
  const readers = [
    ['balanceItem', 'balance item: GetItem'],
    ['entriesFiltered', "today's keys: Query APP#, filter accountId"],
    ['entriesByAccount', 'keyed by account: Query ENT#<account>#'],
  ] as const;
  for (const point of readCost.points) {
    for (const [key, label] of readers) {
      const m = point[key];
      // AWS stops a page at 1 MB read (before a filter); DynamoDB Local pages by what it returns.
      const awsPages =
        key === 'balanceItem'
          ? 1
          : Math.max(1, Math.ceil((m.itemsRead * readCost.entryBytes) / (1024 * 1024)));
      lines.push(
        `${pad(point.entriesPerAccount.toLocaleString('en-US'), 12)}  ${label.padEnd(44)} ${pad(m.itemsRead.toLocaleString('en-US'), 10)} ${pad(m.requests, 5)} ${pad(awsPages, 9)} ${pad(m.readUnitsEventual, 12)} ${pad(m.readUnitsStrong, 10)} ${pad(m.ms.median.toFixed(1), 8)}  ${m.exact ? 'yes' : 'NO'}`,
      );
    }
  }
  const largest = readCost.points.at(-1);
  if (largest) {
    const times = (a: number, b: number) => (b > 0 ? `${Math.round(a / b).toLocaleString('en-US')}×` : 'n/a');
    lines.push(
      `at ${largest.entriesPerAccount.toLocaleString('en-US')} entries per account one balance read costs ${times(largest.entriesFiltered.readUnitsStrong, largest.balanceItem.readUnitsStrong)} a balance item's read units with today's keys, ${times(largest.entriesByAccount.readUnitsStrong, largest.balanceItem.readUnitsStrong)} keyed by account`,
    );
  }
  return lines;
}

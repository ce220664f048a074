/**
 * The numbers of the terminal's tables, as HTML: the same fields and the same `!` marks
 * (`violations` from report.ts decides them), plus the settings a reader needs to trust a run.
 */
import type { Mode } from '../../../contract/topology.js';
import { concurrencyText } from '../../environments/environment.js';
import { anyFault } from '../../local-aws/faults/faults.js';
import type { ExperimentReport, ModeReport } from '../../run/experiment.js';
import { CHARGE_COLUMNS, chargeRows } from '../charge-table.js';
import { describeDrainRounds } from '../drain-rounds.js';
import { describeFaults, FAULT_COLUMNS, faultRows } from '../fault-table.js';
import { firstDrainOf, REDRIVE_COLUMNS, redriveHeading, redriveRows } from '../redrive-tables.js';
import { RESULT_COLUMNS, type ResultCell, resultRows } from '../result-table.js';
import { seconds } from '../seconds.js';
import { escapeHtml } from './html.js';

const modeEntries = (report: Pick<ExperimentReport, 'modes'>): [Mode, ModeReport][] =>
  Object.entries(report.modes) as [Mode, ModeReport][];

function table(caption: string, header: readonly string[], rows: readonly string[][]): string {
  return [
    `<table><caption>${escapeHtml(caption)}</caption><thead><tr>`,
    header
      .map(
        (title, column) => `<th scope="col"${column === 0 ? '' : ' class="num"'}>${escapeHtml(title)}</th>`,
      )
      .join(''),
    '</tr></thead><tbody>',
    // Each row's first cell is pre-rendered (a mode name); the others are numbers or marked numbers.
    rows
      .map(
        ([first, ...rest]) =>
          `<tr><th scope="row">${first ?? ''}</th>${rest.map((cell) => `<td class="num">${cell}</td>`).join('')}</tr>`,
      )
      .join(''),
    '</tbody></table>',
  ].join('');
}

/** A row's cells as HTML: a count a correct run cannot produce is marked `!` and highlighted. */
function markedCells(cells: readonly ResultCell[]): string[] {
  return cells.map(({ text, impossible }) =>
    impossible
      ? `<mark title="a correct run cannot produce this">${escapeHtml(text)} !</mark>`
      : escapeHtml(text),
  );
}

/** The terminal's result table: a count a correct run cannot produce is marked `!` and highlighted. */
export function summaryTable(report: Pick<ExperimentReport, 'modes'>): string {
  const rows = resultRows(report).map(markedCells);
  const when = firstDrainOf(report) ? ', after the redrive: the final state' : '';
  return table(
    `What the verifier counted, by event id (the terminal table)${when}`,
    [...RESULT_COLUMNS],
    rows,
  );
}

/** With --redrive: the result table of the first drain, before the redrive. Empty without one. */
export function firstDrainTable(report: Pick<ExperimentReport, 'modes'>): string {
  const firstDrain = firstDrainOf(report);
  if (firstDrain === undefined) return '';
  return table(
    'The first drain, before the redrive: what the verifier counted then',
    [...RESULT_COLUMNS],
    resultRows(firstDrain).map(markedCells),
  );
}

/**
 * With --redrive: the terminal's table of what the redrive did (the grids above show the final
 * state, and each mode's first drain below it). Empty without one.
 */
export function redriveTable(report: Pick<ExperimentReport, 'modes' | 'redrive'>): string {
  const rows = redriveRows(report).map(markedCells);
  if (rows.length === 0) return '';
  return table(
    `${redriveHeading(report).replace(/:$/, '')}: every DLQ moved back to its source queue, drained and verified again (the grids show the final state)`,
    [...REDRIVE_COLUMNS],
    rows,
  );
}

/** The charge modes' table (the terminal's): what the payment provider's ledger says. Empty without one. */
export function chargeTable(report: Pick<ExperimentReport, 'modes'>): string {
  const rows = chargeRows(report).map(markedCells);
  if (rows.length === 0) return '';
  return table(
    "At the payment provider: its ledger of executed charges, joined by event id (the cells' bottom-left corner: charged more than once)",
    ['mode', ...CHARGE_COLUMNS],
    rows,
  );
}

/** What was injected and what the runtime saw, per mode (the terminal's fault table). */
export function faultTable(report: Pick<ExperimentReport, 'modes'>): string {
  const rows = faultRows(report, '–').map((row) => row.map((cell) => escapeHtml(cell)));
  return table(
    'Faults injected, and what the runtime saw (– : not measured on this target)',
    ['mode', ...FAULT_COLUMNS],
    rows,
  );
}

/** The settings each mode ran with (after local or deployed overrides). */
export function settingsTable(report: ExperimentReport): string {
  const rows = modeEntries(report).map(([mode]) => {
    const s = report.environment.modes[mode];
    return [
      escapeHtml(mode),
      String(s.batchSize),
      `${s.maxBatchingWindowSeconds} s`,
      escapeHtml(concurrencyText(s)),
      `${s.visibilityTimeoutSeconds} s`,
      `${s.functionTimeoutSeconds} s`,
      String(s.maxReceiveCount),
    ];
  });
  return table(
    'Settings per mode',
    [
      'mode',
      'batch size',
      'batching window',
      'max concurrency',
      'visibility timeout',
      'function timeout',
      'max receive count',
    ],
    rows,
  );
}

/** The run's configuration as a definition list: seed, rates, sizes, time spent. */
export function runFacts(report: ExperimentReport): string {
  const c = report.config;
  const rounds = describeDrainRounds(report);
  const facts: [string, string][] = [
    ['target', report.target],
    ['messages per mode', c.messages.toLocaleString('en-US')],
    ['accounts', String(c.accounts)],
    ['seed', c.seed],
    ['crash rate', String(c.crashRate)],
    ['crash seed', c.crashSeed],
    ['faults', anyFault(c.faults) ? describeFaults(c.faults) : 'none besides the crash points'],
    ['duration', seconds(report.durationMs)],
    ...(report.phasesMs
      ? ([
          [
            'phases',
            `startup ${seconds(report.phasesMs.startup)}, produce ${seconds(report.phasesMs.produce)}, drain ${seconds(report.phasesMs.drain)}, verify ${seconds(report.phasesMs.verify)}`,
          ],
        ] as [string, string][])
      : []),
    ...(rounds === undefined ? [] : ([['drain by delivery', rounds]] as [string, string][])),
    ['experiment peak memory', `${Math.round(report.memory.experimentPeakRssKb / 1024)} MB`],
  ];
  // A sentence (the drain's rounds) gets the whole row rather than a column's width.
  return `<dl class="facts">${facts
    .map(
      ([term, value]) =>
        `<div${value.length > 80 ? ' class="wide"' : ''}><dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd></div>`,
    )
    .join('')}</dl>`;
}

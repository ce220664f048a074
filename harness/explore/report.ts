import { EVENT_STATES } from '../../functions/shared/event-details.js';
import { escapeHtml, plural } from '../report/html/html.js';
import { stateStyle } from '../report/html/states.js';
import { PAGE_CSS } from '../report/html/styles.js';
import type { Scenario } from './cell.js';
import type { CellCounts, ExploredCell, ModeExploration } from './explore.js';
import {
  FAULT_NAMES,
  FAULT_TITLES,
  FAULTS,
  type Fault,
  faultsAt,
  type PlannedFault,
  planText,
  type Step,
  stepLabel,
} from './steps.js';

export interface ExploreReport {
  readonly scenario: Scenario;
  readonly depth: 1 | 2;
  /** `--core`: the folder whose cores were explored instead of packages/consumer-cores/src/. */
  readonly core?: string;
  readonly modes: readonly ModeExploration[];
  readonly cells: number;
  /** Cells where a mode's promise did not hold. */
  readonly broken: number;
  readonly seconds: number;
}

/** A cell in a few words: `exact`, or what went wrong (`dup 1, lost 2`), `!` where the promise broke. */
export function cellText(cell: Pick<ExploredCell, 'counts' | 'exact' | 'promiseHeld' | 'timedOut'>): string {
  if (cell.timedOut) return 'timed out';
  if (cell.exact) return 'exact';
  const { counts } = cell;
  const parts = [
    counts.duplicated > 0 ? `dup ${counts.duplicated}` : '',
    counts.lost > 0 ? `lost ${counts.lost}` : '',
    counts.deadLettered > 0 ? `dlq ${counts.deadLettered}` : '',
    (counts.chargedTwice ?? 0) > 0 ? `charged twice ${counts.chargedTwice}` : '',
    counts.consistent ? '' : 'ledger ≠ balance',
  ].filter((part) => part !== '');
  const text = parts.length > 0 ? parts.join(', ') : `drift ${counts.driftCents}`;
  return cell.promiseHeld ? text : `${text} !`;
}

/** `killed-before@1:evt-0000000:UpdateItem:1:1`: what `--cell` takes. */
export function replayCommand(
  mode: string,
  scenario: Scenario,
  plan: readonly PlannedFault[],
  core?: string,
): string {
  const coreOption = core === undefined ? '' : ` --core ${core}`;
  return `npm run explore -- --modes ${mode} --events ${scenario.events} --accounts ${scenario.accounts}${scenario.resent ? ` --resent ${scenario.resent}` : ''}${coreOption} --cell ${planText(plan)}`;
}

/** The depth-1 cell of a step and fault, if it was run. */
function cellAt(exploration: ModeExploration, step: Step, fault: Fault): ExploredCell | undefined {
  return exploration.cells.find(
    (cell) => cell.plan.length === 1 && cell.plan[0]?.step === step.key && cell.plan[0]?.fault === fault,
  );
}

/** Per mode: steps down, faults across; then, at depth 2, the pairs that were not exact. */
export function formatExploration(report: ExploreReport): string {
  const lines: string[] = [];
  for (const exploration of report.modes) {
    const broken = exploration.cells.filter((cell) => !cell.promiseHeld).length;
    lines.push(
      `${exploration.mode}: ${plural(exploration.cells.length, 'cell')} in ${exploration.seconds.toFixed(1)} s` +
        (broken > 0
          ? `, the promise broken in ${plural(broken, 'cell')}`
          : ', its promise held in every cell'),
    );
    const header = ['step', ...FAULT_NAMES.map((fault) => FAULT_TITLES[fault])];
    const rows = exploration.steps.map((step) => [
      stepLabel(step),
      ...FAULT_NAMES.map((fault) => {
        if (!faultsAt(step).includes(fault)) return '·';
        const cell = cellAt(exploration, step, fault);
        return cell === undefined ? '' : cellText(cell);
      }),
    ]);
    lines.push(...table(header, rows).map((line) => `  ${line}`));
    const pairs = exploration.cells.filter((cell) => cell.plan.length === 2);
    if (pairs.length > 0) {
      const inexact = pairs.filter((cell) => !cell.exact);
      lines.push(`  depth 2: ${plural(pairs.length, 'pair')}, ${inexact.length} not exact`);
      for (const cell of inexact.slice(0, 20)) lines.push(`    ${planText(cell.plan)}: ${cellText(cell)}`);
      if (inexact.length > 20) lines.push(`    … and ${inexact.length - 20} more in the JSON report`);
    }
    for (const cell of exploration.cells.filter((cell) => !cell.promiseHeld).slice(0, 5)) {
      lines.push(`  replay: ${replayCommand(exploration.mode, report.scenario, cell.plan, report.core)}`);
    }
    lines.push('');
  }
  lines.push(
    `${plural(report.cells, 'cell')} in ${report.seconds.toFixed(1)} s (${report.scenario.events} events on ` +
      `${plural(report.scenario.accounts, 'account')}, depth ${report.depth}); ` +
      (report.broken > 0 ? `a promise broke in ${plural(report.broken, 'cell')}` : 'every promise held'),
  );
  return lines.join('\n');
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)];
}

/** The cell's colour and glyph: the worst thing that happened in it, as the run page shows events. */
function cellStyle(counts: CellCounts, exact: boolean): { state: string; glyph: string } {
  if (exact) return { state: EVENT_STATES.appliedOnce, glyph: '✓' };
  if (counts.lost > 0) return { state: EVENT_STATES.lost, glyph: '×' };
  if (counts.duplicated > 0) return { state: EVENT_STATES.duplicated, glyph: String(counts.duplicated) };
  if (counts.deadLettered > 0) return { state: EVENT_STATES.deadLettered, glyph: '↓' };
  return { state: EVENT_STATES.duplicated, glyph: '$' };
}

/** One delivery of a cell: how it ended, and its steps in order. */
export function deliveryLine(delivery: ExploredCell['deliveries'][number]): string {
  const acknowledged = delivery.acknowledged ? ', acknowledged' : '';
  return `delivery ${delivery.delivery} (receive ${delivery.receiveCount}, ${delivery.ended}${acknowledged}): ${delivery.trace.map(stepLabel).join(' → ')}`;
}

function traceText(cell: ExploredCell): string {
  return cell.deliveries.map(deliveryLine).join('\n');
}

/** The page: per mode, the matrix as coloured cells with glyphs, each cell's trace and replay on hover. */
export function renderExplorePage(report: ExploreReport): string {
  const sections = report.modes.map((exploration) => {
    const head = FAULT_NAMES.map(
      (fault) => `<th title="${escapeHtml(FAULTS[fault])}">${escapeHtml(FAULT_TITLES[fault])}</th>`,
    ).join('');
    const rows = exploration.steps
      .map((step) => {
        const cells = FAULT_NAMES.map((fault) => {
          if (!faultsAt(step).includes(fault)) return '<td class="na">·</td>';
          const cell = cellAt(exploration, step, fault);
          if (cell === undefined) return '<td></td>';
          const { state, glyph } = cellStyle(cell.counts, cell.exact);
          const title = `${cellText(cell)}\n\n${traceText(cell)}\n\n${replayCommand(exploration.mode, report.scenario, cell.plan, report.core)}`;
          const style = stateStyle(state);
          return `<td><span class="xc${cell.promiseHeld ? '' : ' broken'}" style="background:${style.background};color:${style.foreground}" title="${escapeHtml(title)}">${escapeHtml(glyph)} ${escapeHtml(cellText(cell))}</span></td>`;
        }).join('');
        return `<tr><th class="step">${escapeHtml(stepLabel(step))}</th>${cells}</tr>`;
      })
      .join('\n');
    const pairs = exploration.cells.filter((cell) => cell.plan.length === 2);
    const pairLine =
      pairs.length > 0
        ? `<p>Depth 2: ${plural(pairs.length, 'pair')}, ${pairs.filter((cell) => !cell.exact).length} not exact (the JSON report lists each).</p>`
        : '';
    const broken = exploration.cells.filter((cell) => !cell.promiseHeld).length;
    return `<section class="card"><h2>${escapeHtml(exploration.mode)}</h2>
<p class="sub">${plural(exploration.cells.length, 'cell')} in ${exploration.seconds.toFixed(1)} s; ${broken > 0 ? `its promise broken in ${plural(broken, 'cell')} (outlined)` : 'its promise held in every cell'}.</p>
<table class="matrix"><thead><tr><th>step</th>${head}</tr></thead><tbody>${rows}</tbody></table>${pairLine}</section>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Every crash point: ${escapeHtml(report.modes.map((mode) => mode.mode).join(', '))}</title>
<style>${PAGE_CSS}
table.matrix{border-collapse:collapse;margin-top:8px}
table.matrix th,table.matrix td{border:1px solid var(--line);padding:4px 6px;text-align:left;font-size:13px;vertical-align:top}
table.matrix th.step{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:normal}
td.na{color:var(--muted);text-align:center}
.xc{display:inline-block;padding:2px 6px;border-radius:4px;cursor:help;white-space:nowrap}
.xc.broken{outline:2px solid #1f2933}
</style></head><body><main>
<h1>Every crash point</h1>
<p class="sub">${escapeHtml(`${report.scenario.events} events on ${plural(report.scenario.accounts, 'account')}, one batch; depth ${report.depth}; ${plural(report.cells, 'cell')} in ${report.seconds.toFixed(1)} s${report.core ? `; cores from ${report.core}` : ''}`)}. Each cell is one run with exactly one fault at one step (two at depth 2), drained and counted by the verifier. Hover a cell for its trace and its replay command.</p>
${sections.join('\n')}
</main></body></html>
`;
}

import type { Exploration, ExploredCell, TracedStep } from './explore.js';
import {
  apiScheduleReplay,
  formatInterleavings,
  interleavingsHtml,
  type ScheduleReplay,
} from './interleave-report.js';
import type { DeliveryRecord } from './scenario.js';
import {
  FAULT_NAMES,
  FAULT_TITLES,
  FAULTS,
  type Fault,
  faultsAt,
  RETRY_FAULTS,
  RETRY_TITLES,
  stepLabel,
} from './steps.js';

/** How a cell is replayed: the lab's command, or the API call a team makes. */
export type ReplayText = (exploration: Exploration, cell: ExploredCell) => string;

/** The call that runs one cell alone, the scenario as the explorer was given it. */
export const apiReplay: ReplayText = (_, cell) => `explorer.explore(scenario, { only: ['${cell.plan}'] })`;

/** A cell in a few words, `!` where the invariant broke. */
export function cellText(cell: Pick<ExploredCell, 'summary' | 'held' | 'timedOut'>): string {
  if (cell.timedOut) return `timed out${cell.held ? '' : ' !'}`;
  return cell.held ? cell.summary : `${cell.summary} !`;
}

/** One delivery of a cell: how it ended, and its steps in order. */
export function deliveryLine(delivery: DeliveryRecord): string {
  const acknowledged = delivery.acknowledged
    ? delivery.failed?.length
      ? `, acknowledged, ${delivery.failed.join(' ')} reported failed`
      : ', acknowledged'
    : '';
  const error = delivery.error ? ` [${delivery.error}]` : '';
  return `delivery ${delivery.delivery} (receive ${delivery.receiveCount}, ${delivery.ended}${acknowledged})${error}: ${delivery.trace.map(stepLabel).join(' → ') || 'no step'}`;
}

function rowLabel(exploration: Exploration, step: TracedStep): string {
  const deliveries = new Set(exploration.steps.map((each) => each.delivery)).size;
  return deliveries > 1 ? `d${step.delivery} ${stepLabel(step)}` : stepLabel(step);
}

/** The depth-1 cell of a step and fault, or the retry cell of a step's lost response and a fault on its retry. */
function cellAt(
  exploration: Exploration,
  step: TracedStep,
  fault: Fault,
  retry = false,
): ExploredCell | undefined {
  return exploration.cells.find((cell) => {
    const [first, second] = cell.faults;
    if (first?.delivery !== step.delivery || first.step !== step.key) return false;
    return retry
      ? cell.kind === 'retry' && first.fault === 'response-lost' && second?.fault === fault
      : cell.kind === 'single' && first.fault === fault;
  });
}

/**
 * One scenario's matrix as text: its promise, then steps down and faults across, the retry cells,
 * what each column means, and the broken cells with their violations and replays.
 */
export function formatExploration(
  exploration: Exploration,
  replay: ReplayText = apiReplay,
  scheduleReplay: ScheduleReplay = apiScheduleReplay,
): string {
  const lines: string[] = [];
  if (interleavingsOnly(exploration)) {
    // Only the interleavings were asked for: no matrix of fault cells.
    lines.push(
      `${exploration.scenario}: ${exploration.clean.held ? 'the clean run held' : `the clean run, with no fault, already breaks the invariant: ${exploration.clean.violations.join('; ')}`}`,
      `  promise: ${exploration.promise ?? "not stated: the invariant's violations judge each schedule"}`,
      ...formatInterleavings(exploration, scheduleReplay),
    );
    return lines.join('\n');
  }
  const broken = exploration.cells.filter((cell) => !cell.held);
  const { single, retry, pair } = exploration.counts;
  lines.push(
    `${exploration.scenario}: ${plural(exploration.cells.length, 'cell')} (${single} single, ${retry} on a retry${pair ? `, ${pair} pairs` : ''}) in ${exploration.seconds.toFixed(1)} s, ` +
      (broken.length > 0
        ? `the invariant broken in ${plural(broken.length, 'cell')} (marked !)`
        : 'the invariant held in every cell'),
  );
  lines.push(`  promise: ${exploration.promise ?? "not stated: the invariant's violations judge each cell"}`);
  if (!exploration.clean.held)
    lines.push(
      `  the clean run, with no fault, already breaks it: ${exploration.clean.violations.join('; ')}`,
    );
  const rows = exploration.steps.map((step) => [
    rowLabel(exploration, step),
    ...FAULT_NAMES.map((fault) => {
      if (!faultsAt(step).includes(fault)) return '·';
      const cell = cellAt(exploration, step, fault);
      return cell === undefined ? '' : cellText(cell);
    }),
  ]);
  lines.push(
    ...table(['step', ...FAULT_NAMES.map((fault) => FAULT_TITLES[fault])], rows).map((line) => `  ${line}`),
  );
  const retried = exploration.steps.filter((step) =>
    RETRY_FAULTS.some((fault) => cellAt(exploration, step, fault, true)),
  );
  if (retried.length > 0) {
    lines.push("  on the retry (the first attempt's response lost, then):");
    const retryRows = retried.map((step) => [
      rowLabel(exploration, step),
      ...RETRY_FAULTS.map((fault) => {
        const cell = cellAt(exploration, step, fault, true);
        return cell === undefined ? '' : cellText(cell);
      }),
    ]);
    lines.push(
      ...table(['step', ...RETRY_FAULTS.map((fault) => RETRY_TITLES[fault] ?? fault)], retryRows).map(
        (line) => `    ${line}`,
      ),
    );
  }
  const pairs = exploration.cells.filter((cell) => cell.kind === 'pair');
  if (pairs.length > 0) {
    const notHeld = pairs.filter((cell) => !cell.held);
    lines.push(`  depth 2: ${plural(pairs.length, 'pair')}, the invariant broken in ${notHeld.length}`);
  }
  lines.push('  the faults:');
  for (const fault of FAULT_NAMES) lines.push(`    ${FAULT_TITLES[fault]}: ${FAULTS[fault]}`);
  lines.push(
    `    on the retry: the first attempt's response lost, then the client's retry lost too (lost twice), lost and the process killed, or lost with the error seen`,
    "    acknowledge: the handler's return, then the mapping's delete; d1, d2: the delivery (invocation) a step is in; ·: a fault the step cannot take",
  );
  for (const cell of broken.slice(0, 5)) {
    lines.push(`  ${cell.plan}: ${cell.violations.join('; ')}`);
    for (const delivery of cell.deliveries) lines.push(`    ${deliveryLine(delivery)}`);
    lines.push(`    replay: ${replay(exploration, cell)}`);
  }
  if (broken.length > 5) lines.push(`  … and ${broken.length - 5} more broken cells in the JSON report`);
  lines.push(...formatInterleavings(exploration, scheduleReplay));
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

const TONES: Readonly<
  Record<
    ExploredCell['tone'],
    { readonly background: string; readonly foreground: string; readonly glyph: string }
  >
> = {
  exact: { background: '#d8f3dc', foreground: '#1b4332', glyph: '✓' },
  held: { background: '#fff3bf', foreground: '#5c3c00', glyph: '~' },
  broken: { background: '#ffd6d6', foreground: '#7f1d1d', glyph: '×' },
  'timed-out': { background: '#e9ecef', foreground: '#343a40', glyph: '⏱' },
};

/**
 * The page: per scenario, the matrix as coloured cells (green exact, yellow held with something to
 * see, red broken and outlined, grey timed out), each cell's trace and replay on hover.
 */
export function renderExplorePage(
  explorations: readonly Exploration[],
  options: {
    readonly title?: string;
    readonly subtitle?: string;
    readonly replay?: ReplayText;
    readonly scheduleReplay?: ScheduleReplay;
  } = {},
): string {
  const replay = options.replay ?? apiReplay;
  const scheduleReplay = options.scheduleReplay ?? apiScheduleReplay;
  const td = (exploration: Exploration, cell: ExploredCell | undefined) => {
    if (cell === undefined) return '<td></td>';
    const tone = TONES[cell.tone];
    const title = `${cellText(cell)}${cell.violations.length ? `\n${cell.violations.join('\n')}` : ''}\n\n${cell.deliveries.map(deliveryLine).join('\n')}\n\n${replay(exploration, cell)}`;
    return `<td><span class="xc${cell.held ? '' : ' broken'}" style="background:${tone.background};color:${tone.foreground}" title="${escapeHtml(title)}">${tone.glyph} ${escapeHtml(cellText(cell))}</span></td>`;
  };
  const sections = explorations.map((exploration) => {
    const head = FAULT_NAMES.map(
      (fault) => `<th title="${escapeHtml(FAULTS[fault])}">${escapeHtml(FAULT_TITLES[fault])}</th>`,
    ).join('');
    const retryHead = RETRY_FAULTS.map(
      (fault) =>
        `<th title="the first attempt's response lost, then this on the client's retry">${escapeHtml(RETRY_TITLES[fault] ?? fault)}</th>`,
    ).join('');
    const rows = exploration.steps
      .map((step) => {
        const cells = FAULT_NAMES.map((fault) =>
          faultsAt(step).includes(fault)
            ? td(exploration, cellAt(exploration, step, fault))
            : '<td class="na">·</td>',
        ).join('');
        const retries = RETRY_FAULTS.map((fault) => {
          const cell = cellAt(exploration, step, fault, true);
          return cell === undefined ? '<td class="na">·</td>' : td(exploration, cell);
        }).join('');
        return `<tr><th class="step">${escapeHtml(rowLabel(exploration, step))}</th>${cells}${retries}</tr>`;
      })
      .join('\n');
    const broken = exploration.cells.filter((cell) => !cell.held).length;
    return `<section class="card"><h2>${escapeHtml(exploration.scenario)}</h2>
${exploration.promise ? `<p><b>Promise:</b> ${escapeHtml(exploration.promise)}</p>` : ''}
${interleavingsOnly(exploration) ? '' : `<p class="sub">${plural(exploration.cells.length, 'cell')} in ${exploration.seconds.toFixed(1)} s; ${broken > 0 ? `the invariant broken in ${plural(broken, 'cell')} (outlined)` : 'the invariant held in every cell'}.</p>`}
${!interleavingsOnly(exploration) ? `<table class="matrix"><thead><tr><th>step</th>${head}${retryHead}</tr></thead><tbody>${rows}</tbody></table>` : ''}${pairsList(exploration, td)}${interleavingsHtml(exploration, scheduleReplay, escapeHtml)}</section>`;
  });
  const legend = FAULT_NAMES.map(
    (fault) => `<li><b>${escapeHtml(FAULT_TITLES[fault])}</b>: ${escapeHtml(FAULTS[fault])}</li>`,
  ).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(options.title ?? 'Every crash point')}: ${escapeHtml(explorations.map((each) => each.scenario).join(', '))}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;color:#1f2933;margin:0;background:#f6f7f9}
main{max-width:1200px;margin:0 auto;padding:24px}
.card{background:#fff;border:1px solid #d9dee5;border-radius:8px;padding:12px 16px;margin:16px 0}
.sub{color:#52606d}
table.matrix{border-collapse:collapse;margin-top:8px}
table.matrix th,table.matrix td{border:1px solid #d9dee5;padding:4px 6px;text-align:left;font-size:13px;vertical-align:top}
table.matrix th.step{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:normal}
td.na{color:#9aa5b1;text-align:center}
.xc{display:inline-block;padding:2px 6px;border-radius:4px;cursor:help;white-space:nowrap}
.xc.broken{outline:2px solid #1f2933}
</style></head><body><main>
<h1>${escapeHtml(options.title ?? 'Every crash point')}</h1>
<p class="sub">${escapeHtml(options.subtitle ?? '')}${
    explorations.every(interleavingsOnly)
      ? ' Each schedule is one run of two invocations in flight at once, in the order its name chooses.'
      : ` Each cell is one run of the scenario with exactly the fault its column names at the step its row names (the last three columns: the first attempt's response lost, then that on the client's retry). Green: exact; yellow: the invariant held, with something to see; red, outlined: broken; grey: timed out. Hover a cell for its trace and its replay.</p>
<ul class="sub">${legend}</ul><p>`
  }</p>
${sections.join('\n')}
</main></body></html>
`;
}

/** Only the interleavings were asked for: no fault cells, no matrix. */
function interleavingsOnly(exploration: Exploration): boolean {
  return exploration.cells.length === 0 && exploration.interleavings !== undefined;
}

/** Depth 2's pairs, below the matrix: how many, and each broken one as a cell with its trace on hover. */
function pairsList(
  exploration: Exploration,
  td: (exploration: Exploration, cell: ExploredCell | undefined) => string,
): string {
  const pairs = exploration.cells.filter((cell) => cell.kind === 'pair');
  if (pairs.length === 0) return '';
  const broken = pairs.filter((cell) => !cell.held);
  const rows = broken
    .slice(0, 50)
    .map((cell) => `<tr><th class="step">${escapeHtml(cell.plan)}</th>${td(exploration, cell)}</tr>`)
    .join('');
  return `<p>Depth 2: ${plural(pairs.length, 'pair')}, the invariant broken in ${broken.length}${broken.length > 50 ? ' (the first 50 below; the JSON has every one)' : ''}.</p>${
    rows ? `<table class="matrix"><tbody>${rows}</tbody></table>` : ''
  }`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

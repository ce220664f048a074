import type { Exploration } from './explore.js';
import type { InterleavingExploration, ScheduleRun } from './interleave.js';
import type { TimelineEntry } from './scheduler.js';

/** How a schedule is replayed: the lab's command, or the API call a team makes. */
export type ScheduleReplay = (exploration: Exploration, run: ScheduleRun) => string;

export const apiScheduleReplay: ScheduleReplay = (_, run) =>
  `explorer.explore(scenario, { cells: false, interleavings: { schedules: ['${run.schedule}'] } })`;

/** What the choices in a schedule's name mean: the legend under the interleavings. */
export const CHOICES_LEGEND = [
  'A: the first delivery, B: the second (or the second event); a choice names who takes the next step',
  '(n) in a count: the schedules of it that chose only an order of steps: no stale-delete outcome, refusal or deadline',
  'A=deleted / A=kept: a delete with a stale receipt handle, which AWS says succeeds and may or may not delete',
  "A=in-progress: a token retry answered TransactionInProgressException; plain A: DynamoDB replays the first attempt's success",
  "B!A: B's write refused with TransactionConflict while A's write on the same item is ongoing (one of the two a transaction)",
  'A-timeout: A ended at its deadline, the clock moved past it',
] as const;

/**
 * The schedule to show for a scenario: the first that broke the invariant, else the first that
 * held with something to see (a duplicate a mode's promise allows); of those, one with only an
 * order of steps chosen before one with an outcome, a refusal or a deadline.
 */
export function firstFailing(interleaving: InterleavingExploration): ScheduleRun | undefined {
  const broken = interleaving.schedules.filter((run) => !run.held);
  const shown = broken.length > 0 ? broken : interleaving.schedules.filter((run) => run.tone === 'held');
  return shown.find((run) => !run.injected) ?? shown[0];
}

/** A scenario's schedules in one line: how many, how many broke, and how many of those with no injected answer. */
export function interleavingLine(interleaving: InterleavingExploration): string {
  if (interleaving.skipped !== undefined)
    return `${interleaving.kind}: does not apply: ${interleaving.skipped}`;
  const runs = interleaving.schedules;
  const broken = runs.filter((run) => !run.held);
  const plain = broken.filter((run) => !run.injected).length;
  const timedOut = runs.filter((run) => run.timedOut).length;
  return (
    `${interleaving.kind}: ${runs.length} schedules${interleaving.replayed ? ' (replayed by name)' : interleaving.exhaustive ? '' : ' (stopped at the bound: not every one)'} in ${interleaving.seconds.toFixed(1)} s, ` +
    (broken.length > 0
      ? `the invariant broken in ${broken.length} (${plain} with no fault or refusal injected)`
      : 'the invariant held in every one') +
    (timedOut > 0 ? `; ${timedOut} hung (not the schedule planned)` : '')
  );
}

/** A schedule's steps in order as two columns, A's on the left and B's on the right. */
export function scheduleColumns(timeline: readonly TimelineEntry[], width = 44): string[] {
  const text = (entry: TimelineEntry) => `${entry.label}${entry.note ? ` [${entry.note}]` : ''}`;
  return [
    `${'A: first delivery'.padEnd(width)}B: ${'second delivery'}`,
    ...timeline.map((entry) => (entry.actor === 'A' ? text(entry) : `${''.padEnd(width)}${text(entry)}`)),
  ];
}

/** The interleavings as text: per scenario its line, then the first failing schedule in two columns, and its replay. */
export function formatInterleavings(
  exploration: Exploration,
  replay: ScheduleReplay = apiScheduleReplay,
): string[] {
  const lines: string[] = [];
  const interleavings = exploration.interleavings ?? [];
  if (interleavings.length === 0) return lines;
  lines.push('  interleavings (two invocations in flight at once):');
  for (const interleaving of interleavings) {
    lines.push(`    ${interleavingLine(interleaving)}`);
    const failing = firstFailing(interleaving);
    if (failing === undefined) continue;
    lines.push(
      `      first ${failing.held ? 'not exact' : 'failing'}: ${failing.schedule}: ${failing.held ? failing.summary : failing.violations.join('; ')}`,
    );
    for (const line of scheduleColumns(failing.timeline)) lines.push(`        ${line}`);
    lines.push(`      replay: ${replay(exploration, failing)}`);
  }
  lines.push('    the choices:');
  for (const line of CHOICES_LEGEND) lines.push(`      ${line}`);
  return lines;
}

/** The interleavings as a page section: a line per scenario, the first failing schedule as a two-column table. */
export function interleavingsHtml(
  exploration: Exploration,
  replay: ScheduleReplay,
  escapeHtml: (value: string) => string,
): string {
  const interleavings = exploration.interleavings ?? [];
  if (interleavings.length === 0) return '';
  const parts = interleavings.map((interleaving) => {
    const failing = firstFailing(interleaving);
    const table =
      failing === undefined
        ? ''
        : `<p>First ${failing.held ? 'not exact' : 'failing'}: <code>${escapeHtml(failing.schedule)}</code>: ${escapeHtml(failing.held ? failing.summary : failing.violations.join('; '))}</p>
<table class="matrix"><thead><tr><th>A: first delivery</th><th>B: second delivery</th></tr></thead><tbody>${failing.timeline
            .map((entry) => {
              const cell = `<td>${escapeHtml(entry.label)}${entry.note ? ` <i>[${escapeHtml(entry.note)}]</i>` : ''}</td>`;
              return entry.actor === 'A' ? `<tr>${cell}<td></td></tr>` : `<tr><td></td>${cell}</tr>`;
            })
            .join(
              '',
            )}</tbody></table><p class="sub">replay: <code>${escapeHtml(replay(exploration, failing))}</code></p>`;
    return `<h3>${escapeHtml(interleaving.kind)}</h3><p class="sub">${escapeHtml(interleaving.description)}</p><p>${escapeHtml(interleavingLine(interleaving))}</p>${table}`;
  });
  return `<h3>Interleavings: two invocations in flight at once</h3>${parts.join('\n')}<ul class="sub">${CHOICES_LEGEND.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>`;
}

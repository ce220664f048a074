/**
 * reports/<runId>.html: one self-contained page per run — a grid per mode with a cell per event,
 * the timeline, the terminal's tables, the settings and the command that replays the run. No
 * request leaves the page: styles, script, data and charts are all inline.
 */

import { MODES, type Mode } from '../../../contract/topology.js';
import {
  EVENT_STATES,
  MAX_DETAILED_EVENTS,
  type ManifestDetails,
  type ModeEventDetails,
  type Timeline,
} from '../../../verifier/event-details.js';
import type { ExperimentReport, ModeReport } from '../../run/experiment.js';
import { money } from '../money.js';
import {
  aggregateChart,
  runtimeTimeline,
  type TimelineInput,
  timelineChart,
  timelineExtent,
} from './charts.js';
import { legendGlyph, renderCounts, renderGrid } from './grid.js';
import { escapeHtml, jsonForScript, plural } from './html.js';
import { PAGE_SCRIPT } from './page-script.js';
import { STATE_STYLES } from './states.js';
import { PAGE_CSS } from './styles.js';
import {
  chargeTable,
  faultTable,
  firstDrainTable,
  redriveTable,
  runFacts,
  settingsTable,
  summaryTable,
} from './summary.js';

/** A mode's report, with the reason its per-event detail is absent if the report says one. */
export interface ModeReportWithDetails extends ModeReport {
  /** Why `events` is absent, when a report says it (verifier/event-details.ts). */
  readonly eventsOmitted?: string;
}

/** An ExperimentReport; the per-event detail (`manifest`, `events`) is optional in it. */
export type DetailedReport = Omit<ExperimentReport, 'modes'> & {
  readonly modes: Partial<Record<Mode, ModeReportWithDetails>>;
};

export interface RunReportOptions {
  /** Where the run's JSON report is, as the reader should see it. */
  readonly reportJsonPath: string;
  /** The command that replays the run. */
  readonly replayCommand: string;
}

const modeEntries = (report: DetailedReport): [Mode, ModeReportWithDetails][] =>
  Object.entries(report.modes) as [Mode, ModeReportWithDetails][];

/** The per-event detail of a mode, if the report has it and it matches the manifest. */
function detailOf(report: DetailedReport, mode: ModeReportWithDetails): ModeEventDetails | undefined {
  return report.manifest && mode.events ? mode.events : undefined;
}

export async function renderRunReport(report: DetailedReport, options: RunReportOptions): Promise<string> {
  const modes = modeEntries(report);
  const timelines = new Map<Mode, TimelineInput>();
  for (const [mode, outcome] of modes) {
    const events = detailOf(report, outcome);
    if (events) timelines.set(mode, { timeline: events.timeline, runtime: runtimeTimeline(outcome.runtime) });
  }
  const extent = timelines.size > 0 ? timelineExtent([...timelines.values()]) : undefined;
  const sections = await Promise.all(
    modes.map(([mode, outcome]) => modeSection(report, mode, outcome, timelines.get(mode), extent)),
  );
  const c = report.config;
  const title = `Run ${report.runId}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)} — delivery semantics</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<main>
<header>
<h1>What happened to every message</h1>
<p class="sub">Run <span class="mono">${escapeHtml(report.runId)}</span> on ${escapeHtml(report.target)}:
${escapeHtml(plural(c.messages, 'message'))} to each of ${escapeHtml(plural(modes.length, 'mode'))}, crash rate ${escapeHtml(c.crashRate)}, seed <span class="mono">${escapeHtml(c.seed)}</span>.</p>
<div class="replay"><span>Replay it:</span><pre><code>${escapeHtml(options.replayCommand)}</code></pre></div>
</header>
<p class="intro">The same ${escapeHtml(plural(c.messages, 'message'))} went to every mode's queue, and the crashes were drawn the same way for each; what each consumer made of them:</p>
<section aria-label="At a glance" class="glance">${modes.map(([mode, outcome]) => glanceCard(mode, outcome)).join('')}</section>
<section class="card how" aria-label="How to read the grids">
<p id="grid-help">Below, one grid per mode: a cell per event the producer sent, left to right and top to bottom in the order it sent them (the number starting a row is the position of its first event). Each state has a glyph as well as a colour, and hatching marks money that never arrived. Hover a cell, or <kbd>Tab</kbd> into a grid and move with the arrow keys (<kbd>Home</kbd>/<kbd>End</kbd>, <kbd>PgUp</kbd>/<kbd>PgDn</kbd>), to see the event: its id, account, amount, applications, the receives that applied it, the crashes that hit it, and what became of it in the other modes.</p>
<details><summary>What each colour and glyph means</summary>
${legend()}
</details>
</section>
${sections.join('\n')}
<section class="card" aria-labelledby="numbers-title">
<h2 id="numbers-title">The numbers</h2>
<div class="tables">${summaryTable(report)}${chargeTable(report)}${redriveTable(report)}${firstDrainTable(report)}${faultTable(report)}${settingsTable(report)}</div>
<h3>The run</h3>
${runFacts(report)}
</section>
<footer>The JSON report: <a href="${escapeHtml(relativeJsonHref(options.reportJsonPath))}" class="mono">${escapeHtml(options.reportJsonPath)}</a>. This page is self-contained: it loads nothing.</footer>
</main>
<div id="tip" role="status" aria-live="polite" hidden></div>
${pageData(report)}
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

/** The JSON is written next to the page, so the link is its file name: it works wherever both are copied. */
function relativeJsonHref(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

function glanceCard(mode: Mode, m: ModeReportWithDetails): string {
  const broken = m.lost > 0 || m.unexpected > 0 || !m.consistent;
  const severity = broken ? ' bad' : m.duplicated > 0 ? ' warn' : '';
  const figure = (className: string, value: string, label: string, zero: boolean) =>
    `<div class="${className}${zero ? ' zero' : ''}"><b>${escapeHtml(value)}</b><span>${escapeHtml(label)}</span></div>`;
  const verdict = verdictOf(m);
  const first = m.redrive?.firstDrain;
  const redriven = first
    ? `<p class="when">After the redrive. The first drain: ${escapeHtml(`${first.lost} lost, ${first.duplicated} duplicated, ${first.deadLettered} dead-lettered`)}.</p>`
    : '';
  return `<article class="card${severity}">
<h2>${escapeHtml(mode)}</h2>${redriven}
<p class="what">${escapeHtml(MODES[mode]?.summary ?? '')}</p>
<div class="big">${figure('lost', String(m.lost), 'lost', m.lost === 0)}${figure('dup', String(m.duplicated), `duplicated (+${m.extraApplications} extra)`, m.duplicated === 0)}${figure('', String(m.deadLettered), 'dead-lettered', m.deadLettered === 0)}${figure('', String(m.crashes), 'crashes', m.crashes === 0)}</div>
<p class="verdict">${escapeHtml(verdict)}</p>
</article>`;
}

/** One sentence on what the mode did to the money, for the card at the top. */
function verdictOf(m: ModeReportWithDetails): string {
  if (m.lost === 0 && m.duplicated === 0 && m.unexpected === 0) {
    return m.deadLettered > 0
      ? `Every event accounted for; ${plural(m.deadLettered, 'event')} in the dead-letter queue.`
      : 'Every event applied exactly once.';
  }
  const damage = [
    m.lost > 0 ? `${plural(m.lost, 'event')} lost` : '',
    m.duplicated > 0 ? `${plural(m.duplicated, 'event')} applied more than once` : '',
    m.unexpected > 0 ? `${m.unexpected} unexpected` : '',
  ].filter(Boolean);
  return `${damage.join(', ')}: the balances are off by ${money(m.driftCents)}.`;
}

function legend(): string {
  return `<ul class="legend">${STATE_STYLES.map(
    (style) =>
      `<li><i class="c ${style.key}" aria-hidden="true">${legendGlyph(style.key)}</i><span><strong>${escapeHtml(style.label)}</strong> <span class="how">(${escapeHtml(style.glyphLegend)})</span>: ${escapeHtml(style.meaning)}</span></li>`,
  ).join('')}</ul>`;
}

async function modeSection(
  report: DetailedReport,
  mode: Mode,
  outcome: ModeReportWithDetails,
  timeline: TimelineInput | undefined,
  extent: { origin: number; end: number } | undefined,
): Promise<string> {
  const events = detailOf(report, outcome);
  const head = `<div class="mode-head"><h2 id="mode-${escapeHtml(mode)}">${escapeHtml(mode)}</h2><p class="what">${escapeHtml(MODES[mode]?.summary ?? '')}</p></div>`;
  if (!events || !report.manifest || !timeline || !extent) {
    const why =
      outcome.eventsOmitted ??
      (outcome.produced > MAX_DETAILED_EVENTS
        ? `${outcome.produced.toLocaleString('en-US')} events is more than the ${MAX_DETAILED_EVENTS.toLocaleString('en-US')} per mode a report shows one by one`
        : 'the report has no per-event detail for it');
    return `<section class="card mode aggregated" data-mode="${escapeHtml(mode)}" aria-labelledby="mode-${escapeHtml(mode)}">${head}
<p class="note">No grid for this mode: ${escapeHtml(why)}. Events per state, as the verifier counted them (events applied and also dead-lettered are counted as applied):</p>
<div class="chart">${await aggregateChart(mode, outcome)}</div></section>`;
  }
  const firstDrain = outcome.redrive?.firstDrain.events;
  const marked = firstDrain ? appliedAndDeadLettered(firstDrain) : undefined;
  return `<section class="card mode" data-mode="${escapeHtml(mode)}" aria-labelledby="mode-${escapeHtml(mode)}">${head}
${firstDrain && marked ? redriveStory(firstDrain, events, marked) : ''}${renderCounts(events)}
${renderGrid(mode, report.manifest, events, marked ? { marked: { indices: marked, meaning: 'applied and dead-lettered in the first drain' } } : {})}
<h3>Over time</h3>
${timelineNote(events, timeline.runtime !== undefined)}
<div class="chart">${await timelineChart(mode, timeline, extent)}</div>${firstDrain ? firstDrainGrid(report.manifest, mode, firstDrain) : ''}</section>`;
}

/** The key of a mode's grid of the first drain (a redrive run) in the page data. */
const firstDrainKey = (mode: Mode): string => `${mode} in the first drain`;

/** The events the first drain left applied *and* dead-lettered: what a redrive can credit again. */
function appliedAndDeadLettered(firstDrain: ModeEventDetails): Set<number> {
  const marked = new Set<number>();
  for (let index = 0; index < firstDrain.states.length; index += 1) {
    if (firstDrain.states.charAt(index) === EVENT_STATES.appliedAndDeadLettered) marked.add(index);
  }
  return marked;
}

/**
 * A redrive run's grid shows the final state; one sentence says what the redrive did to the events
 * the first drain left applied and dead-lettered (outlined in it).
 */
function redriveStory(
  before: ModeEventDetails,
  after: ModeEventDetails,
  marked: ReadonlySet<number>,
): string {
  let creditedAgain = 0;
  let backInDlq = 0;
  for (const index of marked) {
    if ((after.applications[index] ?? 0) > (before.applications[index] ?? 0)) creditedAgain += 1;
    else if (after.states.charAt(index) === EVENT_STATES.appliedAndDeadLettered) backInDlq += 1;
  }
  const skipped = marked.size - creditedAgain - backInDlq;
  const story =
    marked.size === 0
      ? 'No event had been applied and dead-lettered in the first drain.'
      : `Outlined: the ${plural(marked.size, 'event', 'events')} applied before ${marked.size === 1 ? 'it was' : 'they were'} dead-lettered in the first drain. ` +
        `After the redrive, ${creditedAgain} credited again, ${skipped} skipped as already applied, ` +
        `${backInDlq} back in the DLQ without a second credit (refused as too old to dedupe, or failed again).`;
  return `<p class="note">After the redrive, the final state. ${escapeHtml(story)} The first drain's grid is below.</p>\n`;
}

/** With --redrive: the mode's grid as the first drain left it, before the redrive. */
function firstDrainGrid(manifest: ManifestDetails, mode: Mode, firstDrain: ModeEventDetails): string {
  return `
<h3>The first drain, before the redrive</h3>
${renderCounts(firstDrain)}
${renderGrid(mode, manifest, firstDrain, { dataKey: firstDrainKey(mode) })}`;
}

function timelineNote(events: ModeEventDetails, runtime: boolean): string {
  const timeline: Timeline = events.timeline;
  const crashes = timeline.crashes.reduce((sum, count) => sum + count, 0);
  const unattributed =
    events.unattributedCrashes > 0
      ? ` ${plural(events.unattributedCrashes, 'crash', 'crashes')} hit a body that names no event (an unparsable poison body): ${events.unattributedCrashes === 1 ? 'it is' : 'they are'} in the timeline, not in the grid.`
      : '';
  return `<p class="note">Applications the ledger recorded per ${timeline.bucketMs / 1000} s${crashes > 0 ? `, and the ${plural(crashes, 'crash', 'crashes')} (red ▼ and dashed line)` : ''}${runtime ? '; the lines are the deliveries and acknowledgements the local runtime counted' : ''}.${unattributed}</p>`;
}

/** One grid's per-event arrays, as the page script reads them. */
function gridData(events: ModeEventDetails) {
  return {
    states: events.states,
    applications: events.applications,
    receiveCounts: events.receiveCounts,
    crashes: events.crashes,
    unexpected: events.unexpectedEventIds,
    ...(events.outOfOrder ? { outOfOrder: events.outOfOrder } : {}),
    ...(events.charges ? { charges: events.charges } : {}),
  };
}

/** The compact data the page script reads: the manifest once, then each mode's per-event arrays. */
function pageData(report: DetailedReport): string {
  const modes: Partial<Record<Mode, unknown>> = {};
  const crashPoints: Partial<Record<Mode, string>> = {};
  for (const [mode, outcome] of modeEntries(report)) {
    const events = detailOf(report, outcome);
    if (!events) continue;
    modes[mode] = gridData(events);
    crashPoints[mode] = `when it hit, ${MODES[mode].crashPoint}`;
    const firstDrain = outcome.redrive?.firstDrain.events;
    if (firstDrain) {
      const key = firstDrainKey(mode);
      modes[key as Mode] = gridData(firstDrain);
      crashPoints[key as Mode] = crashPoints[mode];
    }
  }
  if (!report.manifest || Object.keys(modes).length === 0) return '';
  const data = {
    manifest: report.manifest,
    modes,
    modeOrder: Object.keys(modes),
    states: Object.fromEntries(
      STATE_STYLES.map((style) => [style.key, { label: style.label, meaning: style.meaning }]),
    ),
    glyphs: Object.fromEntries(STATE_STYLES.map((style) => [style.key, style.glyph])),
    crashPoints,
  };
  return `<script type="application/json" id="run-data">${jsonForScript(data)}</script>`;
}

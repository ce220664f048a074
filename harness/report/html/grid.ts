/**
 * One grid per mode: a cell per produced event, in production order, then a cell per unexpected
 * id. Rendered as HTML (not by the page script), so the page shows every message even where
 * scripts are off; the script only adds the details and the keyboard navigation.
 */

import type { Mode } from '../../../contract/topology.js';
import type { ManifestDetails, ModeEventDetails } from '../../../verifier/event-details.js';
import { escapeHtml } from './html.js';
import { type CellState, countStates, STATE_STYLES, stateStyle, UNEXPECTED } from './states.js';

/** Above this many cells a grid gets smaller cells and twice the columns, so it stays one screen wide. */
const DENSE_ABOVE = 5_000;

export interface GridColumns {
  readonly columns: number;
  readonly dense: boolean;
}

export function gridColumns(cells: number): GridColumns {
  return cells > DENSE_ABOVE ? { columns: 100, dense: true } : { columns: 50, dense: false };
}

/** The glyph inside one cell: the number of applications for a duplicate, else the state's glyph. */
function glyph(state: CellState, applications: number): string {
  const style = stateStyle(state);
  if (style.glyph !== 'n') return style.glyph;
  return applications > 99 ? '99+' : String(applications);
}

export function renderGrid(
  mode: Mode,
  manifest: ManifestDetails,
  events: ModeEventDetails,
  options: {
    /** The key of the page data the script reads for this grid. @default the mode */
    readonly dataKey?: string;
    /** Events to outline (by manifest index), with what the outline means. */
    readonly marked?: { readonly indices: ReadonlySet<number>; readonly meaning: string };
  } = {},
): string {
  const cells: string[] = [];
  const late = new Set(events.outOfOrder ?? []);
  for (let index = 0; index < events.states.length; index += 1) {
    const state = events.states.charAt(index) as CellState;
    // Validates the character: an unknown state fails the build of the page, not silently in it.
    stateStyle(state);
    const mark =
      (options.marked?.indices.has(index) ? ' marked' : '') +
      (late.has(index) ? ' late' : '') +
      ((events.charges?.[index] ?? 0) >= 2 ? ' overcharged' : '');
    cells.push(
      `<i role="gridcell" class="c ${state}${mark}">${glyph(state, events.applications[index] ?? 0)}</i>`,
    );
  }
  if (events.states.length !== manifest.eventIds.length) {
    throw new Error(
      `${mode}: ${events.states.length} event states for ${manifest.eventIds.length} manifest events`,
    );
  }
  const produced = cells.length;
  const unexpected = events.unexpectedEventIds.map(
    () => `<i role="gridcell" class="c ${UNEXPECTED}">${stateStyle(UNEXPECTED).glyph}</i>`,
  );
  const { columns, dense } = gridColumns(produced + unexpected.length);
  const rows = [...chunkRows(cells, columns, 0), ...chunkRows(unexpected, columns, produced, true)];
  // Roving tabindex (the ARIA grid pattern): one tab stop per grid, arrows move inside it.
  rows[0] = rows[0]?.replace('<i role="gridcell"', '<i role="gridcell" tabindex="0"') ?? '';
  return [
    `<div class="grid${dense ? ' dense' : ''}" role="grid" data-mode="${escapeHtml(options.dataKey ?? mode)}" data-cols="${columns}"`,
    ` aria-label="${escapeHtml(mode)}: ${produced} events in production order${unexpected.length > 0 ? `, then ${unexpected.length} unexpected ids` : ''}${options.marked && options.marked.indices.size > 0 ? `; outlined: ${escapeHtml(options.marked.meaning)}` : ''}; arrow keys move between events"`,
    ` aria-describedby="grid-help">`,
    rows.join(''),
    '</div>',
  ].join('');
}

function chunkRows(cells: readonly string[], columns: number, first: number, unexpected = false): string[] {
  const rows: string[] = [];
  for (let start = 0; start < cells.length; start += columns) {
    // The row header is the position (1-based) of the row's first event, so a reader can find "event 137".
    const header = unexpected ? '?' : String(first + start + 1);
    rows.push(
      `<div role="row" data-start="${first + start}"${unexpected ? ' class="unexpected-row"' : ''}><span role="rowheader" class="rh">${header}</span>${cells
        .slice(start, start + columns)
        .join('')}</div>`,
    );
  }
  return rows;
}

/** The legend of one mode: every state with its swatch, glyph, label and count (zeros dimmed). */
export function renderCounts(events: ModeEventDetails): string {
  const counts = countStates(events.states, events.unexpectedEventIds.length);
  return `<ul class="counts">${STATE_STYLES.map((style) => {
    const count = counts.get(style.key) ?? 0;
    return `<li class="${count === 0 ? 'zero' : ''}" data-state="${style.key}"><i class="c ${style.key}" aria-hidden="true">${legendGlyph(style.key)}</i><span class="label">${escapeHtml(style.label)}</span> <b class="n">${count.toLocaleString('en-US')}</b></li>`;
  }).join('')}${lateItem(events)}${overchargedItem(events)}</ul>`;
}

/** The other corner's legend item, for a charge mode: events the provider charged more than once. */
function overchargedItem(events: ModeEventDetails): string {
  const overcharged = events.charges?.filter((charges) => charges >= 2).length ?? 0;
  if (overcharged === 0) return '';
  return `<li data-mark="overcharged"><i class="c o overcharged" aria-hidden="true"></i><span class="label">red triangle in a cell's bottom-left corner: the card was charged more than once</span> <b class="n">${overcharged.toLocaleString('en-US')}</b></li>`;
}

/** The corner mark's legend item: events applied after a later event of their account. */
function lateItem(events: ModeEventDetails): string {
  const late = events.outOfOrder?.length ?? 0;
  if (late === 0) return '';
  return `<li data-mark="late"><i class="c o late" aria-hidden="true"></i><span class="label">orange triangle in a cell's top-right corner: applied after a later event of its account</span> <b class="n">${late.toLocaleString('en-US')}</b></li>`;
}

/** The glyph shown in a legend swatch (a duplicate shows "2", the smallest n). */
export function legendGlyph(state: CellState): string {
  return glyph(state, 2);
}

export function stateCounts(events: ModeEventDetails): Map<CellState, number> {
  return countStates(events.states, events.unexpectedEventIds.length);
}

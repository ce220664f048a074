/** The explorer's figures in docs/explore.md: every mode's cells at depth 1, and every interleaving schedule. */
import type { Mode } from '../../../contract/topology.js';
import type { LabCell } from '../explore/explore.js';
import type { LabDetail } from '../explore/lab-scenario.js';
import {
  type ExploreReport,
  INTERLEAVING_COLUMNS,
  INTERLEAVING_NOTE,
  interleavingRows,
} from '../explore/report.js';
import { markdownTable } from './markdown.js';

/** Per mode, what its cells showed: the summary keeps these counts, not the cells' traces. */
export interface ExploreCellsRow {
  readonly mode: Mode;
  readonly steps: number;
  readonly single: CellTally;
  readonly retry: CellTally;
  readonly seconds: number;
}

interface CellTally {
  readonly cells: number;
  readonly exact: number;
  readonly duplicated: number;
  readonly lost: number;
  /** Charge modes only. */
  readonly chargedTwice?: number;
  readonly broken: number;
}

export interface ExploreCells {
  readonly cells: number;
  readonly seconds: number;
  readonly rows: readonly ExploreCellsRow[];
}

function tally(cells: readonly LabCell[], charged: boolean): CellTally {
  const detail = (cell: LabCell) => cell.detail as LabDetail | undefined;
  const count = (test: (cell: LabCell) => boolean) => cells.filter(test).length;
  return {
    cells: cells.length,
    exact: count((cell) => detail(cell)?.exact === true),
    duplicated: count((cell) => (detail(cell)?.counts.duplicated ?? 0) > 0),
    lost: count((cell) => (detail(cell)?.counts.lost ?? 0) > 0),
    ...(charged ? { chargedTwice: count((cell) => (detail(cell)?.counts.chargedTwice ?? 0) > 0) } : {}),
    broken: count((cell) => !cell.held),
  };
}

export function exploreCellsOf(report: ExploreReport): ExploreCells {
  if (report.interleavings) throw new Error('an --interleavings report: record it as explore-interleavings');
  return {
    cells: report.cells,
    seconds: report.seconds,
    rows: report.modes.map((exploration) => {
      const charged = exploration.cells.some(
        (cell) => (cell.detail as LabDetail | undefined)?.counts.chargedTwice !== undefined,
      );
      return {
        mode: exploration.mode,
        steps: exploration.steps.length,
        single: tally(
          exploration.cells.filter((cell) => cell.kind === 'single'),
          charged,
        ),
        retry: tally(
          exploration.cells.filter((cell) => cell.kind === 'retry'),
          charged,
        ),
        seconds: Math.round(exploration.seconds * 10) / 10,
      };
    }),
  };
}

export function exploreCellsTable(cells: ExploreCells): string {
  const charged = (t: CellTally) => (t.chargedTwice === undefined ? '–' : String(t.chargedTwice));
  return markdownTable(
    [
      'mode',
      'steps',
      'single cells',
      'exact',
      'duplicated',
      'lost',
      'charged twice',
      'retry cells',
      'exact',
      'duplicated',
      'lost',
      'charged twice',
      'promise broken',
      's',
    ],
    cells.rows.map((row) => [
      row.mode,
      String(row.steps),
      String(row.single.cells),
      String(row.single.exact),
      String(row.single.duplicated),
      String(row.single.lost),
      charged(row.single),
      String(row.retry.cells),
      String(row.retry.exact),
      String(row.retry.duplicated),
      String(row.retry.lost),
      charged(row.retry),
      String(row.single.broken + row.retry.broken),
      row.seconds.toFixed(1),
    ]),
  );
}

/** The interleaving table's rows, as the terminal computes them. */
export interface ExploreInterleavings {
  readonly schedules: number;
  readonly seconds: number;
  readonly rows: readonly (readonly string[])[];
}

export function exploreInterleavingsOf(report: ExploreReport): ExploreInterleavings {
  if (!report.interleavings) throw new Error('not an --interleavings report: record it as explore-cells');
  return {
    schedules: report.modes.reduce(
      (sum, mode) => sum + (mode.interleavings ?? []).reduce((each, run) => each + run.schedules.length, 0),
      0,
    ),
    seconds: Math.round(report.seconds * 10) / 10,
    rows: interleavingRows(report.modes),
  };
}

export function exploreInterleavingsTable(interleavings: ExploreInterleavings): string {
  const rows = interleavings.rows.map((row) => INTERLEAVING_COLUMNS.map((_, index) => row[index] ?? ''));
  return `${markdownTable(INTERLEAVING_COLUMNS, rows)}\n\n${INTERLEAVING_NOTE}.`;
}

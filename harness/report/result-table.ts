/** The result table: one row per mode, its cells marked where a correct run could not have produced them. */
import { alignedTable } from './aligned-table.js';
import { compactTable, tableWidth } from './compact-table.js';
import { money } from './money.js';
import { type ModeRow, modeRows, type TableReport, violations } from './violations.js';

export const RESULT_COLUMNS = [
  'mode',
  'produced',
  'deliveries',
  'applied once',
  'duplicated (extra)',
  'lost',
  'dead-lettered',
  'unexpected',
  'mismatched',
  'expected',
  'actual',
  'drift',
  'crashes',
  'consistent',
] as const;

/** One cell of the result table: its text, and whether a correct run could not have produced it. */
export interface ResultCell {
  readonly text: string;
  readonly impossible: boolean;
}

/** The result table's cells per mode, in RESULT_COLUMNS order: the terminal and the page render them. */
export function resultRows(report: TableReport): ResultCell[][] {
  return modeRows(report).map(([mode, m]) => {
    const flagged = violations(mode, m);
    const cell = (text: string, field?: keyof ModeRow): ResultCell => ({
      text,
      impossible: field !== undefined && flagged.has(field),
    });
    return [
      cell(mode),
      cell(String(m.produced)),
      cell(String(m.deliveries)),
      cell(String(m.appliedOnce)),
      cell(`${m.duplicated} (${m.extraApplications})`, 'duplicated'),
      cell(String(m.lost), 'lost'),
      cell(String(m.deadLettered)),
      cell(String(m.unexpected), 'unexpected'),
      cell(String(m.payloadMismatches), 'payloadMismatches'),
      cell(money(m.expectedCents)),
      cell(money(m.actualCents)),
      cell(money(m.driftCents), 'driftCents'),
      cell(String(m.crashes)),
      m.consistent ? cell('yes') : { text: 'NO', impossible: true },
    ];
  });
}

/**
 * The result table: one row per mode; a count a correct run cannot produce is marked with `!`.
 * Wider than `width` (the terminal's), it folds: compactTable.
 */
export function formatTable(report: TableReport, width = Number.POSITIVE_INFINITY): string {
  const rows = resultRows(report).map((cells) =>
    cells.map(({ text, impossible }) => (impossible ? `${text} !` : text)),
  );
  const full = alignedTable([...RESULT_COLUMNS], rows);
  return tableWidth(full) <= width ? full : compactTable([...RESULT_COLUMNS], rows);
}

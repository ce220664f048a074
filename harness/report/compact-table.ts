import { alignedTable } from './aligned-table.js';

/**
 * The result table folded for a narrow terminal (the full one is about 175 columns): the columns
 * every mode has quiet (0, yes) go into one line below it, expected and actual give way to their
 * difference, the drift, and the long headers are shortened; a line says each of those. The page
 * and the JSON keep every column.
 */

/** Columns that stay whatever they hold: what the run is about. */
const KEPT = new Set([
  'mode',
  'produced',
  'deliveries',
  'applied once',
  'duplicated (extra)',
  'lost',
  'drift',
]);

/** Columns that go in the compact form: the drift is their difference. */
const DROPPED = new Set(['expected', 'actual']);

const SHORT_HEADERS: Readonly<Record<string, string>> = {
  produced: 'sent',
  'applied once': 'applied 1×',
  'duplicated (extra)': 'dup (extra)',
  'dead-lettered': 'in DLQ',
};

/** A cell no correct run needs to show: nothing happened there. */
function quiet(cell: string): boolean {
  return /^(0|0 \(0\)|0\.00|yes)$/.test(cell);
}

export function tableWidth(table: string): number {
  return Math.max(...table.split('\n').map((line) => line.length));
}

export function compactTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const keep = header.flatMap((title, column) => {
    if (DROPPED.has(title)) return [];
    if (KEPT.has(title)) return [column];
    return rows.every((row) => quiet(row[column] ?? '')) ? [] : [column];
  });
  const quietColumns = header.filter(
    (title, column) => !keep.includes(column) && !DROPPED.has(title) && !KEPT.has(title),
  );
  const titles = keep.map((column) => SHORT_HEADERS[header[column] ?? ''] ?? header[column] ?? '');
  const cells = rows.map((row) => keep.map((column) => row[column] ?? ''));
  const shortened = keep
    .map((column) => header[column] ?? '')
    .filter((title) => SHORT_HEADERS[title] !== undefined)
    .map((title) => `${SHORT_HEADERS[title]} = ${title}`);
  return [
    alignedTable(titles, cells),
    `(folded to fit the terminal: ${[
      ...shortened,
      'drift = actual − expected balances',
      ...(quietColumns.length > 0 ? [`every mode 0 or yes: ${quietColumns.join(', ')}`] : []),
    ].join('; ')}; every column in the JSON and on the page)`,
  ].join('\n');
}

/** The charge table: what the payment provider's ledger says the cards saw, for the charge modes. */
import { chargeOf } from '../../contract/topology.js';
import { alignedTable } from './aligned-table.js';
import { money } from './money.js';
import type { ResultCell } from './result-table.js';
import { modeRows, type TableReport } from './violations.js';

export const CHARGE_COLUMNS = [
  'charges',
  'charged',
  'double-charged',
  'never charged',
  'charged, not recorded',
  'recorded, charge not found',
  'unexpected charges',
  'overcharged',
  'responses lost',
] as const;

/**
 * The charge modes' cells (CHARGE_COLUMNS after the mode): what the payment provider's ledger says
 * the cards saw. A double charge breaks a mode with an idempotency key; an unexpected charge, or a
 * valid event never charged, any charge mode.
 */
export function chargeRows(report: TableReport): ResultCell[][] {
  return modeRows(report).flatMap(([mode, m]) => {
    const charge = chargeOf(mode);
    if (charge === undefined || m.charges === undefined) return [];
    const cell = (text: string, impossible = false): ResultCell => ({ text, impossible });
    const overcharged = m.overchargedCents ?? 0;
    // A dual-writing producer's unsent events reached no consumer, so no card either.
    const neverCharged = (m.neverCharged ?? 0) - (m.neverSent?.events ?? 0);
    return [
      [
        cell(mode),
        cell(String(m.charges)),
        cell(money(m.chargedCents ?? 0)),
        cell(String(m.doubleCharged ?? 0), charge.idempotencyKey && (m.doubleCharged ?? 0) > 0),
        cell(String(m.neverCharged ?? 0), neverCharged > 0),
        cell(String(m.chargedNotRecorded ?? 0)),
        cell(String(m.recordedChargeNotFound ?? 0), (m.recordedChargeNotFound ?? 0) > 0),
        cell(String(m.unexpectedCharges ?? 0), (m.unexpectedCharges ?? 0) > 0),
        cell(money(overcharged), charge.idempotencyKey && overcharged !== 0),
        cell(String(m.providerResponsesLost ?? 0)),
      ],
    ];
  });
}

/** The charge modes' table, when the run had one. */
export function formatChargeTable(report: TableReport): string | undefined {
  const rows = chargeRows(report);
  if (rows.length === 0) return undefined;
  return alignedTable(
    ['at the payment provider', ...CHARGE_COLUMNS],
    rows.map((cells) => cells.map(({ text, impossible }) => (impossible ? `${text} !` : text))),
  );
}

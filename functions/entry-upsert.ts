import { upsertEventRecord } from './shared/event-record.js';
import { type ApplyMessage, workFirstMode } from './shared/work-then-acknowledge.js';

/**
 * entry-upsert: no balance item to add to. Each event writes its own ledger entry, keyed on the
 * event id, with one UpdateItem that SETs the entry's fields: a redelivery writes the same item
 * again, and nothing changes but its `writes` count. The balance is derived on read, the sum of an
 * account's entries ("upsert by a unique key", "dedupe on read"): exact at one write, in any order,
 * with the price moved to whoever reads a balance.
 *
 * The entry is the verifier's application record too (`APP#<eventId>`, `applications` always 1),
 * so a repeat can never read as a duplicate; `writes` shows how many deliveries wrote it.
 */
export const applyEntryUpsert: ApplyMessage = (deps, message, delivery) =>
  upsertEventRecord(deps, message, delivery, deps.ledger.now?.() ?? Date.now());

export const { processBatch, handler } = workFirstMode('entry-upsert', applyEntryUpsert);

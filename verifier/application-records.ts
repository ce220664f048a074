// A mode's application records: read from the ledger or its balance items, grouped per event for the join.
import { appliedOnBalanceAttribute, parseAppliedOnBalance, SK } from '../contract/ledger-keys.js';
import { payloadHash } from '../contract/message.js';
import type { Mode } from '../contract/topology.js';
import { type LedgerReader, numberAttribute, queryPrefix, timeAttribute } from './ledger-reader.js';
import type { AppliedEvent } from './outcome.js';

/** An application record as the verifier reads it; the optional fields only when detail was asked for. */
export interface ApplicationRecord {
  readonly eventId: string;
  readonly accountId: string;
  readonly amountCents: number;
  readonly applications: number;
  readonly receiveCount?: number;
  readonly appliedAtMs?: number;
  readonly chargeId?: string;
}

/**
 * Groups application records (sorted, so one event's records are adjacent) into one entry per event.
 * Receive counts and times are carried only if the records have them, so a count-only verification
 * holds nothing per application.
 */
export async function* groupApplications(
  records: AsyncIterable<ApplicationRecord>,
): AsyncGenerator<AppliedEvent> {
  let current:
    | {
        eventId: string;
        applications: number;
        cents: number;
        payloadHashes: Set<string>;
        receiveCounts?: number[];
        appliedAtMs?: number[];
        chargeIds?: string[];
      }
    | undefined;
  for await (const record of records) {
    if (current && current.eventId !== record.eventId) {
      yield current;
      current = undefined;
    }
    current ??= { eventId: record.eventId, applications: 0, cents: 0, payloadHashes: new Set() };
    current.applications += record.applications;
    current.cents += record.amountCents * record.applications;
    current.payloadHashes.add(payloadHash(record));
    if (record.receiveCount !== undefined) {
      current.receiveCounts ??= [];
      current.receiveCounts.push(record.receiveCount);
    }
    if (record.chargeId !== undefined) {
      current.chargeIds ??= [];
      current.chargeIds.push(record.chargeId);
    }
    if (record.appliedAtMs !== undefined) {
      current.appliedAtMs ??= [];
      for (let index = 0; index < record.applications; index += 1)
        current.appliedAtMs.push(record.appliedAtMs);
    }
  }
  if (current) yield current;
}

/** The mode's application records in key order; receive count and time only when detail is wanted. */
export async function* readApplications(
  reader: LedgerReader,
  runId: string,
  mode: Mode,
  detailed: boolean,
  states?: LatestStates,
  /** A charge mode's records name the provider's charge: joined against its ledger. */
  charges = false,
): AsyncGenerator<ApplicationRecord> {
  // The application time always: the order of applications is counted by every verification.
  const projection = ['eventId', 'accountId', 'amountCents', 'applications', 'appliedAt'];
  if (detailed) projection.push('receiveCount');
  if (states) projection.push('seq', 'balanceAfterCents');
  if (charges) projection.push('chargeId');
  for await (const item of queryPrefix(reader, runId, mode, SK.applicationPrefix, projection)) {
    states?.add(
      String(item.accountId),
      numberAttribute(item, 'seq'),
      numberAttribute(item, 'balanceAfterCents'),
    );
    yield {
      eventId: String(item.eventId),
      accountId: String(item.accountId),
      amountCents: numberAttribute(item, 'amountCents'),
      applications: numberAttribute(item, 'applications'),
      // Required for per-event detail; a count-only verification orders what has a time.
      ...(detailed || item.appliedAt !== undefined ? { appliedAtMs: timeAttribute(item, 'appliedAt') } : {}),
      ...(detailed ? { receiveCount: numberAttribute(item, 'receiveCount') } : {}),
      ...(charges && typeof item.chargeId === 'string' ? { chargeId: item.chargeId } : {}),
    };
  }
}

/**
 * A one-write mode's balance items, whole: their balances, and the applications they carry
 * (appliedOnBalanceAttribute), one record each, in event-id order as the join needs them. Held in
 * memory and sorted: a few dozen bytes per application, so a million-event run of these modes
 * needs tens of MB (the experiment refuses runs whose balance items would outgrow 400 KB).
 */
export async function readBalancesWithApplications(
  reader: LedgerReader,
  runId: string,
  mode: Mode,
  detailed: boolean,
): Promise<{ readonly cents: number; readonly applications: ApplicationRecord[] }> {
  const applications: ApplicationRecord[] = [];
  let cents = 0;
  const attributeOf = appliedOnBalanceAttribute('');
  for await (const item of queryPrefix(reader, runId, mode, SK.balancePrefix, [])) {
    cents += numberAttribute(item, 'balanceCents');
    const accountId = String(item.accountId ?? String(item.sk).slice(SK.balancePrefix.length));
    for (const [name, entries] of Object.entries(item)) {
      if (!name.startsWith(attributeOf) || !Array.isArray(entries)) continue;
      for (const entry of entries) {
        const { receiveCount, appliedAtMs, amountCents } = parseAppliedOnBalance(entry);
        applications.push({
          eventId: name.slice(attributeOf.length),
          accountId,
          amountCents,
          applications: 1,
          appliedAtMs,
          ...(detailed ? { receiveCount } : {}),
        });
      }
    }
  }
  applications.sort((a, b) =>
    a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : (a.appliedAtMs ?? 0) - (b.appliedAtMs ?? 0),
  );
  return { cents, applications };
}

export async function* inOrder<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/**
 * Per account, the state of the highest seq recorded: what a state mode's balances must hold. One
 * pair of numbers per account, however many events.
 */
export class LatestStates {
  private readonly byAccount = new Map<string, { seq: number; cents: number }>();

  add(accountId: string, seq: number, cents: number): void {
    const latest = this.byAccount.get(accountId);
    if (latest === undefined || seq > latest.seq) this.byAccount.set(accountId, { seq, cents });
  }

  totalCents(): number {
    let total = 0;
    for (const { cents } of this.byAccount.values()) total += cents;
    return total;
  }
}

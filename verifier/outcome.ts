import { payloadHash } from '../contract/message.js';
import { EVENT_STATES, type EventState } from './event-details.js';
import type { ManifestEvent } from './manifest.js';

/** The per-run, per-mode outcome the verifier reports (docs/design.md, "Outcome definitions"), all by event id. */
export interface ModeOutcome {
  /** Events in the producer's manifest (poison included). */
  readonly produced: number;
  /** Manifest events the producer sent as invalid bodies on purpose. */
  readonly poison: number;
  /** Manifest events the producer sent twice (same event id, two SQS messages). */
  readonly producerDuplicates: number;
  /** Records handed to the handler, counted before any work. */
  readonly deliveries: number;
  /** Manifest events with exactly one application. */
  readonly appliedOnce: number;
  /** Manifest events with two or more applications. */
  readonly duplicated: number;
  /** Σ (applications − 1) over duplicated events. */
  readonly extraApplications: number;
  /** Manifest events whose message ended in the mode's dead-letter queue, never applied. */
  readonly deadLettered: number;
  /** Σ amounts of the valid events among them: money the DLQ holds, so drift = −this in a correct run. */
  readonly deadLetteredCents: number;
  /** |manifest − (applied ∪ dead-lettered)|: events that vanished. */
  readonly lost: number;
  /**
   * Event ids the producer never sent as a valid event that were applied (unknown ids, poison
   * applied) or found in the DLQ (unknown ids): a bug if not 0.
   */
  readonly unexpected: number;
  /** Applications whose account or amount differ from the manifest's event: a bug if not 0 without reuse. */
  readonly payloadMismatches: number;
  /** Manifest events whose id was also used, applied or dead-lettered, with another account or amount. */
  readonly conflictingReuse: number;
  /** Σ valid manifest amounts. */
  readonly expectedCents: number;
  /** Σ account balances. */
  readonly actualCents: number;
  /** actualCents − expectedCents. */
  readonly driftCents: number;
  /** Σ amounts of application records (× their applications); equals actualCents unless the code has a bug. */
  readonly ledgerCents: number;
  /** ledgerCents === actualCents. */
  readonly consistent: boolean;
  /** Injected crashes recorded by the handlers. */
  readonly crashes: number;
  /** Redeliveries effectively-once recognised by their marker and skipped. */
  readonly suppressedDuplicates: number;
  /** Transactions cancelled by a conflict or throttling and tried again (hot keys). */
  readonly retriedCancellations: number;
  /** Events that were applied and also ended in the DLQ (counted as applied, not as dead-lettered). */
  readonly appliedAndDeadLettered: number;
  /** The run's DLQ messages that name no event at all. */
  readonly deadLetteredUnreadable: number;
  /**
   * Events the age guard refused: older than the mode's dedupe records remember, so not applied
   * (again) but failed into the DLQ for a person to decide on (docs/retention.md). Counted besides
   * their other state (dead-lettered, or applied and dead-lettered).
   */
  readonly tooOldToDedupe: number;
  /**
   * Events first applied after a later event of the same account had been applied (by the
   * producer's seq and the ledger's application times): order within a key, broken. Events without
   * a seq (older manifests) are not counted.
   */
  readonly orderViolations: number;
  /**
   * FIFO modes only: of deadLettered, the events in the DLQ that its sweep could not see. SQS hides
   * a message group's later messages while its first ones are in flight, so a reader that does not
   * delete sees only the head of each group. An event neither applied nor seen is counted here when
   * its account's group heads the DLQ, it comes after the last event of its account seen there, and
   * the DLQ holds an unseen message for it (docs/ordering.md, "Counting a FIFO DLQ"); otherwise it
   * is lost.
   */
  readonly deadLetteredUnseen?: number;
  /**
   * State modes only (topology `balance: 'state'`): events whose state was not written because a newer
   * state of their account was stored already. Applied, not lost: the newer state contains them.
   */
  readonly superseded?: number;
  /** Charge modes only (topology `charge`): the provider's charges, joined by event id (ChargeCounts). */
  readonly charges?: number;
  readonly chargedCents?: number;
  readonly overchargedCents?: number;
  readonly doubleCharged?: number;
  readonly neverCharged?: number;
  readonly chargedNotRecorded?: number;
  readonly unexpectedCharges?: number;
  readonly recordedChargeNotFound?: number;
  /** Charge requests whose response the provider lost on purpose (--provider-lost-response-rate). */
  readonly providerResponsesLost?: number;
}

/** One event's application records, read in key order and grouped. */
export interface AppliedEvent {
  readonly eventId: string;
  /** Σ applications (a processed marker counts its own; other records are one each). */
  readonly applications: number;
  /** Σ amountCents × applications. */
  readonly cents: number;
  /** The payload hashes of its records: one, unless the applied payloads differ. */
  readonly payloadHashes: ReadonlySet<string>;
  /** Per record, when its records carry them (the verifier reads them only for per-event detail). */
  readonly receiveCounts?: readonly number[];
  /** Epoch ms of each application (a marker's applications all at its own time), when carried. */
  readonly appliedAtMs?: readonly number[];
  /** The payment provider's charge each record names (the charge modes), when carried. */
  readonly chargeIds?: readonly string[];
}

/** One event id as the join saw it, for a caller that wants per-event detail. */
export interface JoinedEvent {
  readonly eventId: string;
  /** Undefined for an id the producer never sent. */
  readonly manifest: ManifestEvent | undefined;
  readonly applied: AppliedEvent | undefined;
  /** Undefined for an id the producer never sent (applied or dead-lettered: counted as unexpected). */
  readonly state: EventState | undefined;
}

/** Called once per event id, in event-id order. */
export type EventSink = (event: JoinedEvent) => void;

export interface JoinCounts {
  appliedOnce: number;
  duplicated: number;
  extraApplications: number;
  deadLettered: number;
  deadLetteredCents: number;
  lost: number;
  unexpected: number;
  payloadMismatches: number;
  conflictingReuse: number;
  appliedAndDeadLettered: number;
  ledgerCents: number;
  orderViolations: number;
  /** Of deadLettered, those behind their group's head in a FIFO DLQ (see ModeOutcome.deadLetteredUnseen). */
  deadLetteredUnseen: number;
  /** Of lost, the events that could have been behind a group's head but found no room in the DLQ. */
  unseenBeyondCapacity: number;
  /** The ids behind orderViolations, when the join was asked to keep them (per-event detail). */
  outOfOrderEventIds?: ReadonlySet<string>;
}

/**
 * Joins three streams sorted by event id — the manifest, the applied events and the dead-lettered
 * ids — holding one event of each at a time, so memory stays flat however large the run.
 */
export async function joinByEventId(
  manifest: AsyncIterable<ManifestEvent>,
  applied: AsyncIterable<AppliedEvent>,
  deadLettered: Iterable<readonly [string, ReadonlySet<string>]>,
  sink?: EventSink,
  options: {
    readonly keepOutOfOrderIds?: boolean;
    /** A FIFO mode's DLQ, for what its sweep could not see (ModeOutcome.deadLetteredUnseen). */
    readonly fifoDeadLetters?: FifoDeadLetters;
  } = {},
): Promise<JoinCounts> {
  const counts: JoinCounts = {
    appliedOnce: 0,
    duplicated: 0,
    extraApplications: 0,
    deadLettered: 0,
    deadLetteredCents: 0,
    lost: 0,
    unexpected: 0,
    payloadMismatches: 0,
    conflictingReuse: 0,
    appliedAndDeadLettered: 0,
    ledgerCents: 0,
    orderViolations: 0,
    deadLetteredUnseen: 0,
    unseenBeyondCapacity: 0,
  };
  const behindHeads = options.fifoDeadLetters ? new BehindGroupHeads(options.fifoDeadLetters) : undefined;
  const order = new OrderOfApplication(options.keepOutOfOrderIds === true);
  const events = manifest[Symbol.asyncIterator]();
  const applications = applied[Symbol.asyncIterator]();
  const dead = deadLettered[Symbol.iterator]();
  let event = await events.next();
  let application = await applications.next();
  let letter = dead.next();
  let previous: string | undefined;
  for (;;) {
    const ids = [
      event.done ? undefined : event.value.eventId,
      application.done ? undefined : application.value.eventId,
      letter.done ? undefined : letter.value[0],
    ].filter((id): id is string => id !== undefined);
    if (ids.length === 0) {
      const late = order.violations();
      counts.orderViolations = late.count;
      if (late.eventIds) counts.outOfOrderEventIds = late.eventIds;
      return counts;
    }
    // The smallest id of the three heads; a string sort compares code units, as `<` does.
    const [id] = ids.sort() as [string];
    // The join is only right if every stream is sorted; a bug there must not produce plausible numbers.
    if (previous !== undefined && id <= previous)
      throw new Error(`event ids out of order: ${id} after ${previous}`);
    previous = id;

    const inManifest = !event.done && event.value.eventId === id ? event.value : undefined;
    const appliedEvent =
      !application.done && application.value.eventId === id ? application.value : undefined;
    const deadHashes = !letter.done && letter.value[0] === id ? letter.value[1] : undefined;
    const behindGroupHead =
      inManifest !== undefined && appliedEvent === undefined && deadHashes === undefined
        ? (behindHeads?.behind(inManifest, counts) ?? false)
        : false;
    const state = tallyEvent(counts, inManifest, appliedEvent, deadHashes, behindGroupHead);
    if (inManifest && appliedEvent) order.add(inManifest, appliedEvent);
    sink?.({ eventId: id, manifest: inManifest, applied: appliedEvent, state });

    if (inManifest) event = await events.next();
    if (appliedEvent) application = await applications.next();
    if (deadHashes) letter = dead.next();
  }
}

/** What the verifier knows of a FIFO DLQ beyond the ids its sweep saw. */
export interface FifoDeadLetters {
  /**
   * Per account of the run whose message group the sweep found in the DLQ, the greatest event id
   * it saw there: the end of the group's visible head.
   */
  readonly lastSeenOfAccount: ReadonlyMap<string, string>;
  /** Messages the DLQ holds that the sweep did not see: at most this many events can be behind a head. */
  readonly unseenMessages: number;
}

/**
 * Decides, event by event, which unapplied events the sweep did not see a FIFO DLQ holds behind a
 * group's head. A group's visible head is its first messages, with no holes, so only an event
 * after the last one seen of its account can hide behind it (within an account the manifest's ids
 * follow its seqs, and a group leaves the queue in order); and only as many as the DLQ holds
 * unseen messages. The rest is lost: a loss before or inside the head, or more events than the DLQ
 * holds, stays a loss, and the counts, the money and the per-event states agree (the events past
 * the room are the last ones in id order).
 */
class BehindGroupHeads {
  private room: number;

  constructor(private readonly dlq: FifoDeadLetters) {
    this.room = Math.max(0, dlq.unseenMessages);
  }

  /** Whether an unapplied event the sweep did not see is behind its account's head in the DLQ. */
  behind({ accountId, eventId }: ManifestEvent, counts: JoinCounts): boolean {
    const last = this.dlq.lastSeenOfAccount.get(accountId);
    if (last === undefined || eventId <= last) return false;
    if (this.room === 0) {
      counts.unseenBeyondCapacity += 1;
      return false;
    }
    this.room -= 1;
    return true;
  }
}

/** Counts one event and returns its state: the counts and the per-event states cannot disagree. */
function tallyEvent(
  counts: JoinCounts,
  event: ManifestEvent | undefined,
  applied: AppliedEvent | undefined,
  deadHashes: ReadonlySet<string> | undefined,
  /** Its account's group is at the head of a FIFO DLQ: unseen, it is behind it. */
  behindGroupHead = false,
): EventState | undefined {
  if (applied) counts.ledgerCents += applied.cents;
  if (event === undefined) {
    counts.unexpected += 1;
    return undefined;
  }
  if (event.poison !== undefined) {
    // Never sent as a valid event: any application is unexpected; a dead letter is only counted if it is ours.
    if (applied) {
      counts.unexpected += 1;
      return EVENT_STATES.poisonApplied;
    }
    if (deadHashes || behindGroupHead) {
      counts.deadLettered += 1;
      if (behindGroupHead) counts.deadLetteredUnseen += 1;
      return EVENT_STATES.poisonDeadLettered;
    }
    counts.lost += 1;
    return EVENT_STATES.poisonLost;
  }
  const expected = payloadHash(event);
  // The id was used for another payload too, whichever copy came first (applied or dead-lettered).
  const seen = new Set([...(applied?.payloadHashes ?? []), ...(deadHashes ?? [])]);
  if ([...seen].some((hash) => hash !== expected)) counts.conflictingReuse += 1;
  const ownDeadLetter = deadHashes !== undefined && (deadHashes.size === 0 || deadHashes.has(expected));
  if (applied) {
    if (applied.applications === 1) counts.appliedOnce += 1;
    else {
      counts.duplicated += 1;
      counts.extraApplications += applied.applications - 1;
    }
    if ([...applied.payloadHashes].some((hash) => hash !== expected)) counts.payloadMismatches += 1;
    if (ownDeadLetter) {
      counts.appliedAndDeadLettered += 1;
      return EVENT_STATES.appliedAndDeadLettered;
    }
    return applied.applications === 1 ? EVENT_STATES.appliedOnce : EVENT_STATES.duplicated;
  }
  if (ownDeadLetter || behindGroupHead) {
    counts.deadLettered += 1;
    counts.deadLetteredCents += event.amountCents;
    if (!behindGroupHead) return EVENT_STATES.deadLettered;
    counts.deadLetteredUnseen += 1;
    return EVENT_STATES.deadLetteredUnseen;
  }
  counts.lost += 1;
  return EVENT_STATES.lost;
}

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

/**
 * Per account, each applied event's seq and first application time; then, in time order, every
 * event applied after one with a higher seq is a violation. Two numbers per applied event: the
 * one part of the verification whose memory grows with the run (1,000,000 events: ~16 MB).
 */
class OrderOfApplication {
  private readonly byAccount = new Map<string, number[]>();
  /** Per account, the event id of each pair, when the ids are kept (small runs' detail). */
  private readonly idsByAccount = new Map<string, string[]>();

  constructor(private readonly keepIds: boolean) {}

  add(event: ManifestEvent, applied: AppliedEvent): void {
    const first = applied.appliedAtMs === undefined ? undefined : Math.min(...applied.appliedAtMs);
    if (event.seq === undefined || first === undefined) return;
    let pairs = this.byAccount.get(event.accountId);
    if (!pairs) {
      pairs = [];
      this.byAccount.set(event.accountId, pairs);
    }
    pairs.push(first, event.seq);
    if (this.keepIds) {
      const ids = this.idsByAccount.get(event.accountId) ?? [];
      ids.push(event.eventId);
      this.idsByAccount.set(event.accountId, ids);
    }
  }

  violations(): { count: number; eventIds?: Set<string> } {
    let count = 0;
    const late = this.keepIds ? new Set<string>() : undefined;
    for (const [account, pairs] of this.byAccount) {
      const ids = this.idsByAccount.get(account);
      const applications: [number, number, number][] = [];
      for (let index = 0; index < pairs.length; index += 2)
        applications.push([pairs[index] ?? 0, pairs[index + 1] ?? 0, index / 2]);
      // Equal times in seq order: only an application strictly earlier can precede.
      applications.sort(([timeA, seqA], [timeB, seqB]) => timeA - timeB || seqA - seqB);
      let highest = 0;
      for (const [, seq, position] of applications) {
        if (seq < highest) {
          count += 1;
          const id = ids?.[position];
          if (id !== undefined) late?.add(id);
        } else highest = seq;
      }
    }
    return late ? { count, eventIds: late } : { count };
  }
}

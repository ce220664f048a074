// What the verifier reports per mode and per event, and how the join counts one event into it.
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

/** Counts one event and returns its state: the counts and the per-event states cannot disagree. */
export function tallyEvent(
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

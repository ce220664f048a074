import type { Mode } from '../contract/topology.js';
import { EVENT_STATES } from './event-details.js';
import type { JoinedEvent } from './outcome.js';

/** One charge the payment provider executed, as its ledger names it (metadata: run, mode, event). */
export interface ProviderChargeRecord {
  readonly chargeId: string;
  readonly eventId: string;
  readonly amountCents: number;
}

/** Reads the provider's ledger: every charge it executed for one mode of one run. */
export type ChargeReader = (runId: string, mode: Mode) => AsyncIterable<ProviderChargeRecord>;

/** What the card saw, per mode with a charge (docs/side-effects.md); all by event id. */
export interface ChargeCounts {
  /** Charges the provider executed for the mode's events. */
  readonly charges: number;
  /** Σ their amounts. */
  readonly chargedCents: number;
  /** Σ amounts of every charge of an event after its first: money taken twice. */
  readonly overchargedCents: number;
  /** Events charged two or more times. */
  readonly doubleCharged: number;
  /** Valid events not dead-lettered that the provider never charged. */
  readonly neverCharged: number;
  /** Events charged at the provider with no record in the ledger: the window a crash opens. */
  readonly chargedNotRecorded: number;
  /** Charges for event ids the producer never sent as a valid event: a bug if not 0. */
  readonly unexpectedCharges: number;
  /**
   * Recorded events whose record names no charge the provider executed for that event (none at
   * all, or another event's): the ledger says charged, the provider does not. A bug if not 0.
   */
  readonly recordedChargeNotFound: number;
}

/**
 * Tallies the provider's charges against the join, one event at a time (`sink`). The charges are
 * held per event id in memory, about one entry per event: unlike the ledger, the provider's ledger
 * is not sorted by event id.
 */
export class ChargeTally {
  private readonly byEvent = new Map<string, { count: number; cents: number; ids: Set<string> }>();
  private readonly seen = new Set<string>();
  private counts = {
    doubleCharged: 0,
    neverCharged: 0,
    chargedNotRecorded: 0,
    unexpectedCharges: 0,
    recordedChargeNotFound: 0,
  };
  private charges = 0;
  private chargedCents = 0;
  private overchargedCents = 0;

  static async read(reader: ChargeReader, runId: string, mode: Mode): Promise<ChargeTally> {
    const tally = new ChargeTally();
    for await (const charge of reader(runId, mode)) tally.add(charge);
    return tally;
  }

  add(charge: ProviderChargeRecord): void {
    const entry = this.byEvent.get(charge.eventId) ?? { count: 0, cents: 0, ids: new Set<string>() };
    entry.count += 1;
    entry.ids.add(charge.chargeId);
    entry.cents += charge.amountCents;
    if (entry.count > 1) this.overchargedCents += charge.amountCents;
    this.byEvent.set(charge.eventId, entry);
    this.charges += 1;
    this.chargedCents += charge.amountCents;
  }

  /** How often the provider charged an event. */
  chargesOf(eventId: string): number {
    return this.byEvent.get(eventId)?.count ?? 0;
  }

  readonly sink = (event: JoinedEvent): void => {
    this.seen.add(event.eventId);
    const charges = this.chargesOf(event.eventId);
    const valid = event.manifest !== undefined && event.manifest.poison === undefined;
    if (!valid) {
      this.counts.unexpectedCharges += charges;
      return;
    }
    if (charges >= 2) this.counts.doubleCharged += 1;
    if (event.applied !== undefined) {
      const recorded = event.applied.chargeIds ?? [];
      const known = this.byEvent.get(event.eventId)?.ids;
      if (recorded.length === 0 || recorded.some((id) => known?.has(id) !== true))
        this.counts.recordedChargeNotFound += 1;
    }
    if (charges >= 1 && event.applied === undefined) this.counts.chargedNotRecorded += 1;
    const deadLettered =
      event.state === EVENT_STATES.deadLettered || event.state === EVENT_STATES.deadLetteredUnseen;
    if (charges === 0 && !deadLettered) this.counts.neverCharged += 1;
  };

  finish(): ChargeCounts {
    let unexpected = this.counts.unexpectedCharges;
    for (const [eventId, { count }] of this.byEvent) if (!this.seen.has(eventId)) unexpected += count;
    return {
      charges: this.charges,
      chargedCents: this.chargedCents,
      overchargedCents: this.overchargedCents,
      doubleCharged: this.counts.doubleCharged,
      neverCharged: this.counts.neverCharged,
      chargedNotRecorded: this.counts.chargedNotRecorded,
      unexpectedCharges: unexpected,
      recordedChargeNotFound: this.counts.recordedChargeNotFound,
    };
  }
}

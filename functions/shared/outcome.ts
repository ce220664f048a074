/** The per-run, per-mode outcome the verifier reports (DESIGN: outcome definitions). */
export interface ModeOutcome {
  /** Messages in the producer's manifest. */
  readonly produced: number;
  /** Records handed to the handler, counted before any work. */
  readonly deliveries: number;
  /** Events with exactly one application. */
  readonly appliedOnce: number;
  /** Events with two or more applications. */
  readonly duplicated: number;
  /** Σ (applications − 1) over duplicated events. */
  readonly extraApplications: number;
  /** The run's messages found in the mode's dead-letter queue. */
  readonly deadLettered: number;
  /**
   * Produced events neither applied nor dead-lettered: produced − |applied ∪ dead-lettered|. (DESIGN
   * writes produced − applied − deadLettered; the union keeps an event that was applied and then
   * dead-lettered from being subtracted twice.)
   */
  readonly lost: number;
  /** Σ manifest amounts. */
  readonly expectedCents: number;
  /** Σ account balances. */
  readonly actualCents: number;
  /** actualCents − expectedCents. */
  readonly driftCents: number;
  /** Σ amounts of application records; equals actualCents unless the code has a bug. */
  readonly ledgerCents: number;
  /** ledgerCents === actualCents. */
  readonly consistent: boolean;
  /** Injected crashes recorded by the handlers. */
  readonly crashes: number;
  /** Redeliveries effectively-once recognised by their marker and skipped. */
  readonly suppressedDuplicates: number;
  /** Events that were applied and also ended in the DLQ (counted in both, not in lost). */
  readonly appliedAndDeadLettered: number;
  /** The run's DLQ messages whose body names no event (poison bodies); not in deadLettered. */
  readonly deadLetteredUnreadable: number;
}

/**
 * Streams application records (sorted so one event's records are adjacent) into counts, holding
 * one event at a time instead of the whole run.
 */
export class ApplicationTally {
  appliedEvents = 0;
  appliedOnce = 0;
  duplicated = 0;
  extraApplications = 0;
  ledgerCents = 0;
  appliedAndDeadLettered = 0;
  private current: string | undefined;
  private currentCount = 0;

  constructor(private readonly deadLetteredEventIds: ReadonlySet<string>) {}

  add(record: { readonly eventId: string; readonly amountCents: number }): void {
    this.ledgerCents += record.amountCents;
    if (record.eventId === this.current) {
      this.currentCount += 1;
      return;
    }
    this.closeEvent();
    this.current = record.eventId;
    this.currentCount = 1;
  }

  finish(): this {
    this.closeEvent();
    this.current = undefined;
    return this;
  }

  private closeEvent(): void {
    if (this.current === undefined) return;
    this.appliedEvents += 1;
    if (this.currentCount === 1) this.appliedOnce += 1;
    else {
      this.duplicated += 1;
      this.extraApplications += this.currentCount - 1;
    }
    if (this.deadLetteredEventIds.has(this.current)) this.appliedAndDeadLettered += 1;
  }
}

export function computeOutcome(input: {
  readonly produced: number;
  readonly expectedCents: number;
  readonly tally: ApplicationTally;
  readonly deadLettered: number;
  readonly deadLetteredUnreadable: number;
  readonly actualCents: number;
  readonly counters: {
    readonly deliveries: number;
    readonly crashes: number;
    readonly suppressedDuplicates: number;
  };
}): ModeOutcome {
  const { tally } = input;
  const deadLetteredNotApplied = input.deadLettered - tally.appliedAndDeadLettered;
  return {
    produced: input.produced,
    deliveries: input.counters.deliveries,
    appliedOnce: tally.appliedOnce,
    duplicated: tally.duplicated,
    extraApplications: tally.extraApplications,
    deadLettered: input.deadLettered,
    // Not clamped: a negative value means applications of events the producer never sent, a bug to see.
    lost: input.produced - tally.appliedEvents - deadLetteredNotApplied,
    expectedCents: input.expectedCents,
    actualCents: input.actualCents,
    driftCents: input.actualCents - input.expectedCents,
    ledgerCents: tally.ledgerCents,
    consistent: tally.ledgerCents === input.actualCents,
    crashes: input.counters.crashes,
    suppressedDuplicates: input.counters.suppressedDuplicates,
    appliedAndDeadLettered: tally.appliedAndDeadLettered,
    deadLetteredUnreadable: input.deadLetteredUnreadable,
  };
}

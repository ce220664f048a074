/**
 * Per-event detail the verifier returns when asked (`{ "runId", "events": true }`), so a report can
 * show every message — on every target, since it comes from the ledger, not from the local runtime.
 * Compact on purpose: a Lambda response is at most 6 MB, so runs above MAX_DETAILED_EVENTS events
 * get counts only, and a report shows an aggregated view for them.
 */

/** Above this many events per mode the verifier returns no per-event detail. */
export const MAX_DETAILED_EVENTS = 20_000;

/** One character per event and mode. */
export const EVENT_STATES = {
  appliedOnce: 'o',
  duplicated: 'd',
  lost: 'l',
  deadLettered: 'x',
  /** Applied once or more, and also found in the DLQ. */
  appliedAndDeadLettered: 'a',
  /** Sent as an invalid body; dead-lettered (correct) or lost (at-most-once). See `poison`. */
  poisonDeadLettered: 'p',
  poisonLost: 'q',
  /** A poison body that was applied: a bug. */
  poisonApplied: 'u',
} as const;

export type EventState = (typeof EVENT_STATES)[keyof typeof EVENT_STATES];

/** The manifest, in production order: the same for every mode, so sent once. */
export interface ManifestDetails {
  readonly eventIds: readonly string[];
  readonly accountIds: readonly string[];
  readonly amountCents: readonly number[];
  /** The poison kind of each event, or null for a valid one. */
  readonly poison: readonly (string | null)[];
}

/** One mode's per-event outcome, aligned with ManifestDetails by index. */
export interface ModeEventDetails {
  /** One EVENT_STATES character per event. */
  readonly states: string;
  /** Applications of each event (a marker counts its own). */
  readonly applications: readonly number[];
  /** The ApproximateReceiveCount of each application, comma-separated ("" when none). */
  readonly receiveCounts: readonly string[];
  /** The crashes recorded for each event: "<receiveCount>" per crash, comma-separated ("" when none). */
  readonly crashes: readonly string[];
  /** Applied ids the producer never sent (they have no place in the manifest's order). */
  readonly unexpectedEventIds: readonly string[];
  /** Applications and recorded crashes over time, in buckets from the first one. */
  readonly timeline: Timeline;
}

export interface Timeline {
  /** Epoch ms of the first bucket's start. */
  readonly startMs: number;
  readonly bucketMs: number;
  readonly applications: readonly number[];
  readonly crashes: readonly number[];
}

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
  /**
   * Dead-lettered in a FIFO DLQ behind its account's first messages, where a sweep that does not
   * delete cannot see it: counted from the group's head and the DLQ's message count (ModeOutcome
   * `deadLetteredUnseen`), and in `deadLettered`. A poison event so counted stays 'p'.
   */
  deadLetteredUnseen: 'h',
  /**
   * Applied once or more, and also found in the DLQ. The counts include it in `appliedOnce` or
   * `duplicated` as well (and in `appliedAndDeadLettered`): see `applications` for which.
   */
  appliedAndDeadLettered: 'a',
  /** Sent as an invalid body; dead-lettered (correct) or lost (at-most-once). See `poison`. */
  poisonDeadLettered: 'p',
  poisonLost: 'q',
  /** A poison body that was applied: a bug. */
  poisonApplied: 'u',
} as const;

export type EventState = (typeof EVENT_STATES)[keyof typeof EVENT_STATES];

/**
 * The manifest, in production order (event-id order: the producer's ids are zero-padded): the same
 * for every mode, so sent once.
 */
export interface ManifestDetails {
  readonly eventIds: readonly string[];
  readonly accountIds: readonly string[];
  /** Each event's position in its account's stream (null without one); absent in older reports. */
  readonly seqs?: readonly (number | null)[];
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
  /**
   * The ApproximateReceiveCount of each application record, comma-separated ("" when none). A
   * processed marker is one record: its first receive count, however many applications it counts.
   */
  readonly receiveCounts: readonly string[];
  /** The crashes recorded for each event: "<receiveCount>" per crash, comma-separated ("" when none). */
  readonly crashes: readonly string[];
  /**
   * Ids the producer never sent, applied or found in the DLQ (they have no place in the manifest's
   * order): with the 'u' states, as many as the mode's `unexpected` count.
   */
  readonly unexpectedEventIds: readonly string[];
  /**
   * Recorded crashes whose key names no manifest event (at-most-once crashes on an unparsable body
   * before reading its id, and keys it by the message id); they are in the timeline only.
   */
  readonly unattributedCrashes: number;
  /**
   * Manifest indices of the events first applied after a later event of their account (the
   * outcome's orderViolations, one by one); absent when there are none.
   */
  readonly outOfOrder?: readonly number[];
  /** Applications and recorded crashes over time, in buckets from the first one. */
  readonly timeline: Timeline;
  /** A charge mode's charges of each event at the payment provider; absent for other modes. */
  readonly charges?: readonly number[];
}

/**
 * Every application of the mode (unexpected ids included; a marker's at its own time) and every
 * recorded crash, per bucket. No applications and no crashes: startMs 0 and empty arrays.
 */
export interface Timeline {
  /** Epoch ms of the first bucket's start: the earliest application or crash. */
  readonly startMs: number;
  /** 1000, or a multiple of it so that there are at most MAX_TIMELINE_BUCKETS buckets. */
  readonly bucketMs: number;
  readonly applications: readonly number[];
  readonly crashes: readonly number[];
}

/** Above this many buckets a timeline gets coarser buckets (whole seconds), so a long run stays small. */
export const MAX_TIMELINE_BUCKETS = 300;

/** A crash item of the ledger (`CRASH#<key>#<receiveCount>`), as the verifier reads it. */
export interface CrashRecord {
  /** The event id, or the message id of a body that did not parse. */
  readonly key: string;
  readonly receiveCount: number;
  /** Epoch ms of the (last) crash at this key and receive count. */
  readonly crashedAtMs: number;
  /** Crashes at this key and receive count: more than one only for a re-sent copy. */
  readonly crashes: number;
}

/** What the join hands to the collector per event id (a structural subset of outcome.ts's JoinedEvent). */
interface DetailedEvent {
  readonly eventId: string;
  readonly manifest:
    | {
        readonly accountId: string;
        readonly amountCents: number;
        readonly seq?: number;
        readonly poison?: string;
      }
    | undefined;
  readonly applied:
    | {
        readonly applications: number;
        readonly receiveCounts?: readonly number[];
        readonly appliedAtMs?: readonly number[];
      }
    | undefined;
  readonly state: EventState | undefined;
}

export interface EventDetailsCollector {
  /** Give it every event id of the join, in order. */
  readonly sink: (event: DetailedEvent) => void;
  /** `outOfOrder`: the ids the join found applied after a later event of their account. */
  finish(outOfOrder?: ReadonlySet<string>): {
    readonly manifest: ManifestDetails;
    readonly events: ModeEventDetails;
  };
}

/**
 * Collects one mode's per-event detail from the join, aligned with the manifest by index (the join
 * visits the manifest in event-id order, which is production order: the producer's ids are
 * zero-padded). Crashes are few, so they are looked up in a map rather than joined as a stream.
 */
export function collectEventDetails(
  crashes: readonly CrashRecord[],
  /** A charge mode's charges per event id at the payment provider. */
  chargesOf?: (eventId: string) => number,
): EventDetailsCollector {
  const crashesByKey = new Map<string, number[]>();
  for (const crash of [...crashes].sort((a, b) => a.receiveCount - b.receiveCount)) {
    const counts = crashesByKey.get(crash.key) ?? [];
    for (let index = 0; index < crash.crashes; index += 1) counts.push(crash.receiveCount);
    crashesByKey.set(crash.key, counts);
  }
  const manifest = {
    eventIds: [] as string[],
    accountIds: [] as string[],
    seqs: [] as (number | null)[],
    amountCents: [] as number[],
    poison: [] as (string | null)[],
  };
  const states: string[] = [];
  const applications: number[] = [];
  const receiveCounts: string[] = [];
  const crashesPerEvent: string[] = [];
  const unexpectedEventIds: string[] = [];
  const applicationTimes: number[] = [];
  const charges: number[] = [];
  let attributedCrashes = 0;

  return {
    sink(event) {
      for (const time of event.applied?.appliedAtMs ?? []) applicationTimes.push(time);
      if (event.manifest === undefined || event.state === undefined) {
        unexpectedEventIds.push(event.eventId);
        return;
      }
      manifest.eventIds.push(event.eventId);
      manifest.accountIds.push(event.manifest.accountId);
      manifest.seqs.push(event.manifest.seq ?? null);
      manifest.amountCents.push(event.manifest.amountCents);
      manifest.poison.push(event.manifest.poison ?? null);
      states.push(event.state);
      applications.push(event.applied?.applications ?? 0);
      receiveCounts.push((event.applied?.receiveCounts ?? []).join(','));
      const crashed = crashesByKey.get(event.eventId) ?? [];
      attributedCrashes += crashed.length;
      crashesPerEvent.push(crashed.join(','));
      if (chargesOf) charges.push(chargesOf(event.eventId));
    },
    finish(outOfOrder) {
      const late = outOfOrder
        ? manifest.eventIds.flatMap((id, index) => (outOfOrder.has(id) ? [index] : []))
        : [];
      const totalCrashes = [...crashesByKey.values()].reduce((sum, counts) => sum + counts.length, 0);
      return {
        manifest,
        events: {
          states: states.join(''),
          applications,
          receiveCounts,
          crashes: crashesPerEvent,
          unattributedCrashes: totalCrashes - attributedCrashes,
          unexpectedEventIds,
          ...(late.length > 0 ? { outOfOrder: late } : {}),
          ...(chargesOf ? { charges } : {}),
          timeline: buildTimeline(
            applicationTimes,
            crashes.flatMap((crash) => Array<number>(crash.crashes).fill(crash.crashedAtMs)),
          ),
        },
      };
    },
  };
}

/**
 * Counts applications and crashes per bucket from the earliest of both: 1 s buckets, or whole
 * seconds more so that there are at most MAX_TIMELINE_BUCKETS.
 */
export function buildTimeline(applicationTimes: readonly number[], crashTimes: readonly number[]): Timeline {
  const all = [...applicationTimes, ...crashTimes];
  if (all.length === 0) return { startMs: 0, bucketMs: 1000, applications: [], crashes: [] };
  const startMs = all.reduce((low, time) => Math.min(low, time));
  const spanMs = all.reduce((high, time) => Math.max(high, time)) - startMs;
  const bucketMs = 1000 * Math.max(1, Math.ceil(spanMs / ((MAX_TIMELINE_BUCKETS - 1) * 1000)));
  const length = Math.floor(spanMs / bucketMs) + 1;
  const count = (times: readonly number[]) => {
    const buckets = Array<number>(length).fill(0);
    for (const time of times) {
      const index = Math.floor((time - startMs) / bucketMs);
      buckets[index] = (buckets[index] ?? 0) + 1;
    }
    return buckets;
  };
  return { startMs, bucketMs, applications: count(applicationTimes), crashes: count(crashTimes) };
}

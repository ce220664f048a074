// The verifier's join: the manifest, the applied events and the dead-lettered ids, one event id at a time.
import type { ManifestEvent } from './manifest.js';
import { OrderOfApplication } from './order-of-application.js';
import { type AppliedEvent, type EventSink, type JoinCounts, tallyEvent } from './outcome.js';

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

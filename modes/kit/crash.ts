import { createHash } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { receiveCountOf, recordAttribution, redriveCountOf } from '../../contract/message.js';

/**
 * Crash injection (docs/design.md, "Crash model"). Whether to crash is a pure function of
 * (seed, eventId, receive count, redrive count): a run is reproducible, a redelivery gets a fresh
 * draw (its receive count differs), and so does a redriven copy, whose receive count starts over
 * but whose redrive count is one higher (docs/redrive.md). A redrive count of 0 — a message never
 * redriven — draws exactly what it drew before redrive counts existed, so seeds replay unchanged.
 */
export function crashDraw(seed: string, eventId: string, receiveCount: number, redriveCount = 0): number {
  const redrive = redriveCount > 0 ? `\0${redriveCount}` : '';
  const digest = createHash('sha256').update(`${seed}\0${eventId}\0${receiveCount}${redrive}`).digest();
  return digest.readUInt32BE(0) / 0x1_0000_0000;
}

export function shouldCrash(
  rate: number,
  seed: string,
  eventId: string,
  receiveCount: number,
  redriveCount = 0,
): boolean {
  return rate > 0 && crashDraw(seed, eventId, receiveCount, redriveCount) < rate;
}

/**
 * Ends the process the way an OOM kill or a pod kill does: no catch, no finally, no flush. A test's
 * stand-in never settles instead, so nothing after it runs, in the code around it either.
 */
export type Kill = () => never | Promise<never>;

export const killSelf: Kill = () => {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL cannot be caught; this line only satisfies the type checker.
  throw new Error('unreachable: SIGKILL did not end the process');
};

export interface CrashPoint {
  readonly runId: string | undefined;
  /** The event id, or the message id when the body did not parse. */
  readonly key: string;
  readonly receiveCount: number;
  /**
   * How often the message was redriven from its DLQ. Unset: the count observe() read from the
   * invocation's record of this key and receive count (0 if none).
   */
  readonly redriveCount?: number;
  /** Where in the handler the crash lands, for the log line written just before it. */
  readonly where: string;
}

export interface CrashInjector {
  /**
   * Reads the redrive counts of an invocation's records (strictly: a malformed one throws), so a
   * crash point that names only its event and receive count draws with its copy's redrive count.
   * Called once per invocation, before any work (countDeliveries does); it forgets the previous one.
   */
  observe?(records: readonly SQSRecord[]): void;
  /** Returns if there is no crash; otherwise records it and never returns. */
  maybeCrash(point: CrashPoint): Promise<void>;
}

/**
 * `<eventId>@<receiveCount>`: one delivery of one event as the producer sent it, for a crash at a
 * chosen point. A redriven copy of the event (redrive count ≥ 1) restarts its receive count but is
 * not the delivery a target names, so no target kills it (docs/redrive.md).
 */
export const crashTarget = (key: string, receiveCount: number): string => `${key}@${receiveCount}`;

export function createCrashInjector(options: {
  readonly rate: number;
  readonly seed: string;
  /**
   * Deliveries that crash whatever the rate draws (crashTarget form, redrive count 0 only): a
   * deterministic selector for single-message demonstrations. @default none
   */
  readonly at?: ReadonlySet<string>;
  /** Records the crash where the verifier can count it (best effort: it must not prevent the kill). */
  readonly record: (point: CrashPoint) => Promise<void>;
  readonly kill?: Kill;
}): CrashInjector {
  const kill = options.kill ?? killSelf;
  const targeted = (options.at?.size ?? 0) > 0;
  /** The invocation's redrive counts by crashTarget(key, receive count): the most and the least. */
  let redriveCounts = new Map<string, { readonly most: number; readonly least: number }>();
  return {
    observe(records) {
      // Read only when crashes are drawn or targeted: at rate 0 without targets (every deployed
      // default) the attribute changes nothing, so a malformed one must not fail a batch that would
      // otherwise be processed.
      if (options.rate <= 0 && !targeted) return;
      const counts = new Map<string, { most: number; least: number }>();
      for (const record of records) {
        const target = crashTarget(
          recordAttribution(record).eventId ?? record.messageId,
          receiveCountOf(record),
        );
        const count = redriveCountOf(record);
        const seen = counts.get(target);
        counts.set(target, {
          most: Math.max(seen?.most ?? count, count),
          least: Math.min(seen?.least ?? count, count),
        });
      }
      redriveCounts = counts;
    },
    async maybeCrash(point) {
      const target = crashTarget(point.key, point.receiveCount);
      const counts = redriveCounts.get(target);
      // Two copies of one event at one receive count in one batch: the most redriven one decides the
      // draw, and the target holds if one of them was never redriven (the kill ends the whole batch).
      const redriveCount = point.redriveCount ?? counts?.most ?? 0;
      const chosen = (options.at?.has(target) ?? false) && (point.redriveCount ?? counts?.least ?? 0) === 0;
      if (!chosen && !shouldCrash(options.rate, options.seed, point.key, point.receiveCount, redriveCount))
        return;
      await options.record(point).catch(() => undefined);
      await kill();
    },
  };
}

import { createHash } from 'node:crypto';

/**
 * Crash injection (docs/design.md, "Crash model"). Whether to crash is a pure function of
 * (seed, eventId, receive count): a run is reproducible, and a redelivery gets a fresh draw.
 */
export function crashDraw(seed: string, eventId: string, receiveCount: number): number {
  const digest = createHash('sha256').update(`${seed}\0${eventId}\0${receiveCount}`).digest();
  return digest.readUInt32BE(0) / 0x1_0000_0000;
}

export function shouldCrash(rate: number, seed: string, eventId: string, receiveCount: number): boolean {
  return rate > 0 && crashDraw(seed, eventId, receiveCount) < rate;
}

/** Ends the process the way an OOM kill or a pod kill does: no catch, no finally, no flush. */
export type Kill = () => never;

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
  /** Where in the handler the crash lands, for the log line written just before it. */
  readonly where: string;
}

export interface CrashInjector {
  /** Returns if there is no crash; otherwise records it and never returns. */
  maybeCrash(point: CrashPoint): Promise<void>;
}

/** `<eventId>@<receiveCount>`: one delivery of one event, for a crash at a chosen point. */
export const crashTarget = (key: string, receiveCount: number): string => `${key}@${receiveCount}`;

export function createCrashInjector(options: {
  readonly rate: number;
  readonly seed: string;
  /**
   * Deliveries that crash whatever the rate draws (crashTarget form): a deterministic selector
   * for single-message demonstrations. @default none
   */
  readonly at?: ReadonlySet<string>;
  /** Records the crash where the verifier can count it (best effort: it must not prevent the kill). */
  readonly record: (point: CrashPoint) => Promise<void>;
  readonly kill?: Kill;
}): CrashInjector {
  const kill = options.kill ?? killSelf;
  return {
    async maybeCrash(point) {
      const chosen = options.at?.has(crashTarget(point.key, point.receiveCount)) ?? false;
      if (!chosen && !shouldCrash(options.rate, options.seed, point.key, point.receiveCount)) return;
      await options.record(point).catch(() => undefined);
      kill();
    },
  };
}

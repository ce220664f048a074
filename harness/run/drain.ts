import type { Mode } from '../../contract/topology.js';
import type {
  EffectiveModeSettings,
  ExperimentEnvironment,
  LiveModeStats,
} from '../environments/environment.js';

export interface ModeSnapshot {
  readonly visible: number;
  readonly inFlight: number;
  readonly live?: LiveModeStats;
  readonly drained: boolean;
}

export interface DrainSnapshot {
  readonly elapsedMs: number;
  readonly modes: Readonly<Partial<Record<Mode, ModeSnapshot>>>;
}

/** The queues stopped changing before they drained: something is stuck, not slow. */
export class DrainTimeoutError extends Error {
  override readonly name = 'DrainTimeoutError';
}

/**
 * How long a drain may see nothing change before it gives up. In a working run something
 * observable happens at least once per receive: a batch is delivered, acknowledged, times out or
 * crashes, or a hidden message becomes visible again when its visibility timeout ends. The longest
 * silent gap is therefore one invocation (function timeout plus any injected work delay) or one
 * visibility timeout, whichever is longer — whatever the number of messages, the batch size, the
 * concurrency or the max receive count, which only change how many such gaps there are. (A
 * replacement's init, up to 10 s, and a batching window, 1 s, come before an invocation: the
 * margin covers them.) Twice that, plus the margin, is a stall.
 */
export function drainStallMs(
  modes: Readonly<Partial<Record<Mode, EffectiveModeSettings>>>,
  workDelayMs = 0,
): number {
  const longestGapMs = Math.max(
    0,
    ...Object.values(modes).map(
      (settings) =>
        Math.max(settings.visibilityTimeoutSeconds, settings.functionTimeoutSeconds) * 1000 + workDelayMs,
    ),
  );
  return 2 * longestGapMs + 10_000;
}

/**
 * Waits until every mode's queue is empty — nothing visible, nothing in flight, no invocation
 * running — for `stablePolls` polls in a row. In-flight matters: a crashed batch is invisible until
 * its visibility timeout expires, then comes back. Gives up only when nothing at all has changed
 * for `stallMs` (see drainStallMs), never because the run is long.
 * Returns, per mode, the time from the start until it first drained for good.
 */
export async function waitUntilDrained(
  env: ExperimentEnvironment,
  modes: readonly Mode[],
  options: {
    readonly stallMs: number;
    readonly pollMs?: number;
    readonly stablePolls?: number;
    readonly onTick?: (snapshot: DrainSnapshot) => void;
  },
): Promise<Record<Mode, number>> {
  const started = Date.now();
  const pollMs = options.pollMs ?? 250;
  const stablePolls = options.stablePolls ?? 3;
  const zeroStreak = new Map<Mode, number>();
  const drainedAt = new Map<Mode, number>();
  let lastState = '';
  let lastProgressAt = started;
  for (;;) {
    const fatal = env.fatalError?.();
    if (fatal) throw fatal;
    const entries = await answeredWithin(
      options.stallMs,
      Promise.all(
        modes.map(async (mode) => {
          const depth = await env.queueDepth(mode);
          const live = env.liveStats?.(mode);
          const empty = depth.visible === 0 && depth.inFlight === 0 && (live?.inFlight ?? 0) === 0;
          const streak = empty ? (zeroStreak.get(mode) ?? 0) + 1 : 0;
          zeroStreak.set(mode, streak);
          if (streak === 1) drainedAt.set(mode, Date.now() - started);
          if (!empty) drainedAt.delete(mode);
          return [mode, { ...depth, ...(live ? { live } : {}), drained: streak >= stablePolls }] as const;
        }),
      ),
    );
    const now = Date.now();
    const elapsedMs = now - started;
    options.onTick?.({ elapsedMs, modes: Object.fromEntries(entries) });
    if (entries.every(([, snapshot]) => snapshot.drained)) {
      return Object.fromEntries(modes.map((mode) => [mode, drainedAt.get(mode) ?? elapsedMs])) as Record<
        Mode,
        number
      >;
    }
    const state = JSON.stringify(entries.map(([, snapshot]) => progressOf(snapshot)));
    // Every queue empty and counting its quiet polls is the drain finishing, not a stall: a deployed
    // drain needs a minute of quiet, longer than the stall limit of a short visibility timeout.
    const allEmpty = modes.every((mode) => (zeroStreak.get(mode) ?? 0) > 0);
    if (state !== lastState || allEmpty) {
      lastState = state;
      lastProgressAt = now;
    } else if (now - lastProgressAt > options.stallMs) {
      throw new DrainTimeoutError(describeStall(entries, now - lastProgressAt, elapsedMs));
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** A queue-depth read that never answers is a stall too, not a reason to wait forever. */
async function answeredWithin<T>(stallMs: number, read: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DrainTimeoutError(
            `queues not drained: reading their depths did not answer within ${Math.round(stallMs / 1000)} s ` +
              '(is the SQS endpoint reachable?)',
          ),
        ),
      stallMs,
    );
  });
  try {
    return await Promise.race([read, silent]);
  } finally {
    clearTimeout(timer);
  }
}

/** What changes when a drain makes progress: the queue's counts and the runtime's counters. */
function progressOf(snapshot: ModeSnapshot): readonly number[] {
  const { visible, inFlight, live } = snapshot;
  if (!live) return [visible, inFlight];
  return [
    visible,
    inFlight,
    live.deliveries,
    live.acknowledged,
    live.inFlight,
    live.crashes,
    live.timeouts,
    live.injected.redelivered,
  ];
}

function describeStall(
  entries: ReadonlyArray<readonly [Mode, ModeSnapshot]>,
  stalledMs: number,
  elapsedMs: number,
): string {
  const stuck = entries
    .filter(([, snapshot]) => !snapshot.drained)
    .map(([mode, { visible, inFlight, live }]) => {
      const runtime = live
        ? `, ${live.inFlight} held by the local runtime (${live.deliveries} delivered, ${live.acknowledged} acknowledged)`
        : '';
      return `${mode}: ${visible} visible, ${inFlight} in flight${runtime}`;
    })
    .join('; ');
  return (
    `queues not drained: nothing changed for ${Math.round(stalledMs / 1000)} s ` +
    `(after ${Math.round(elapsedMs / 1000)} s of draining). Stuck: ${stuck}. ` +
    'Messages in flight that never come back point at a consumer that hangs or a queue whose ' +
    'visibility timeout is longer than expected (a CLI run keeps the functions’ logs in reports/<runId>.logs).'
  );
}

/** One delivery round of a drain, every mode's records of one receive count together. */
export interface DrainRound {
  /** 1: first deliveries; n: the records handed over for the nth time. */
  readonly receiveCount: number;
  readonly records: number;
  /** Batches holding one of them that failed whole: their records come back a visibility timeout later. */
  readonly failedBatches: number;
  /** When the last batch holding one was done, in ms from the drain's start (negative: before it). */
  readonly doneAtMs: number;
}

/** The rounds of every mode the local runtime ran, merged by receive count (none on a deployed stack). */
export function drainRoundsOf(
  stats: readonly (LiveModeStats | undefined)[],
  drainStartMs: number,
): DrainRound[] {
  const merged = new Map<number, DrainRound>();
  for (const round of stats.flatMap((mode) => mode?.rounds ?? [])) {
    const before = merged.get(round.receiveCount);
    const doneAtMs = round.lastDoneAtMs - drainStartMs;
    merged.set(round.receiveCount, {
      receiveCount: round.receiveCount,
      records: (before?.records ?? 0) + round.records,
      failedBatches: (before?.failedBatches ?? 0) + round.failedBatches,
      doneAtMs: Math.max(before?.doneAtMs ?? doneAtMs, doneAtMs),
    });
  }
  return [...merged.values()].sort((a, b) => a.receiveCount - b.receiveCount);
}

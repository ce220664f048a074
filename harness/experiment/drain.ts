import type { Mode } from '../../lib/topology.js';
import type { ExperimentEnvironment, LiveModeStats } from '../environments/environment.js';

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

export class DrainTimeoutError extends Error {
  override readonly name = 'DrainTimeoutError';
}

/**
 * Waits until every mode's queue is empty — nothing visible, nothing in flight, no invocation
 * running — for `stablePolls` polls in a row. In-flight matters: a crashed batch is invisible until
 * its visibility timeout expires, then comes back.
 * Returns, per mode, the time from the start until it first drained for good.
 */
export async function waitUntilDrained(
  env: ExperimentEnvironment,
  modes: readonly Mode[],
  options: {
    readonly timeoutMs: number;
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
  for (;;) {
    const fatal = env.fatalError?.();
    if (fatal) throw fatal;
    const entries = await Promise.all(
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
    );
    const elapsedMs = Date.now() - started;
    options.onTick?.({ elapsedMs, modes: Object.fromEntries(entries) });
    if (entries.every(([, snapshot]) => snapshot.drained)) {
      return Object.fromEntries(modes.map((mode) => [mode, drainedAt.get(mode) ?? elapsedMs])) as Record<
        Mode,
        number
      >;
    }
    if (elapsedMs > options.timeoutMs) {
      const left = entries
        .filter(([, snapshot]) => !snapshot.drained)
        .map(([mode, s]) => `${mode}: ${s.visible} visible, ${s.inFlight} in flight`)
        .join('; ');
      throw new DrainTimeoutError(`queues not drained after ${Math.round(elapsedMs / 1000)} s (${left})`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

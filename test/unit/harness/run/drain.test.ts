import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type {
  EffectiveModeSettings,
  ExperimentEnvironment,
  LiveModeStats,
} from '../../../../harness/environments/environment.js';
import { RoundRecorder } from '../../../../harness/local-aws/lambda-runtime/timeline.js';
import {
  DrainTimeoutError,
  drainRoundsOf,
  drainStallMs,
  waitUntilDrained,
} from '../../../../harness/run/drain.js';

const NO_INJECTED = {
  redelivered: 0,
  kills: 0,
  slowInvocations: 0,
  throttled: 0,
  serverErrors: 0,
  lostResponses: 0,
  conflicts: 0,
};

function live(overrides: Partial<LiveModeStats> = {}): LiveModeStats {
  return {
    deliveries: 0,
    acknowledged: 0,
    inFlight: 0,
    crashes: 0,
    timeouts: 0,
    slowestInvocationMs: 0,
    coldStarts: 0,
    visibilityOverruns: 0,
    injected: NO_INJECTED,
    ...overrides,
  };
}

/** One mode whose queue and runtime follow `state(elapsed ms)`; no network. */
function fakeEnvironment(
  state: (elapsedMs: number) => { visible: number; inFlight: number; live: LiveModeStats },
): ExperimentEnvironment {
  const started = Date.now();
  return {
    modes: ['at-least-once'],
    queueDepth: async () => {
      const { visible, inFlight } = state(Date.now() - started);
      return { visible, inFlight };
    },
    liveStats: () => state(Date.now() - started).live,
  } as unknown as ExperimentEnvironment;
}

const settings = (visibilityTimeoutSeconds: number, functionTimeoutSeconds: number) =>
  ({ visibilityTimeoutSeconds, functionTimeoutSeconds }) as EffectiveModeSettings;

describe('drainStallMs', () => {
  it('allows twice the longest silent gap (one visibility timeout or one invocation) plus a margin', () => {
    expect(drainStallMs({ 'at-least-once': settings(4, 3) })).toBe(2 * 4_000 + 10_000);
    expect(drainStallMs({ 'at-least-once': settings(4, 3), 'at-most-once': settings(10, 8) })).toBe(30_000);
  });

  it('grows with the injected work delay, which lengthens an invocation', () => {
    expect(drainStallMs({ 'at-least-once': settings(4, 3) }, 11_000)).toBe(2 * 15_000 + 10_000);
  });
});

describe('waitUntilDrained', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps waiting past the stall span while the runtime makes progress, then reports the drain', async () => {
    // One delivery per second for 60 s, far beyond a 5 s stall span, then empty.
    const env = fakeEnvironment((elapsed) => {
      const done = Math.min(60, Math.floor(elapsed / 1000));
      return done < 60
        ? { visible: 60 - done, inFlight: 1, live: live({ deliveries: done, inFlight: 1 }) }
        : { visible: 0, inFlight: 0, live: live({ deliveries: 60, acknowledged: 60 }) };
    });
    const drained = waitUntilDrained(env, ['at-least-once'], { stallMs: 5_000, pollMs: 250 });
    await vi.advanceTimersByTimeAsync(62_000);
    await expect(drained).resolves.toEqual({ 'at-least-once': expect.any(Number) });
    expect((await drained)['at-least-once']).toBeGreaterThanOrEqual(60_000);
  });

  it('waits out more quiet polls than the stall span holds when every queue is empty (a deployed drain)', async () => {
    // A deployed drain wants a minute of quiet; a short visibility timeout makes the stall span shorter.
    const env = fakeEnvironment(() => ({ visible: 0, inFlight: 0, live: live() }));
    const drained = waitUntilDrained(env, ['at-least-once'], {
      stallMs: 5_000,
      pollMs: 1_000,
      stablePolls: 12,
    });
    await vi.advanceTimersByTimeAsync(13_000);
    await expect(drained).resolves.toEqual({ 'at-least-once': expect.any(Number) });
  });

  it('gives up once nothing has changed for the stall span, and says what is stuck', async () => {
    const env = fakeEnvironment(() => ({
      visible: 0,
      inFlight: 10,
      live: live({ deliveries: 10, inFlight: 10 }),
    }));
    const drained = waitUntilDrained(env, ['at-least-once'], { stallMs: 5_000, pollMs: 250 });
    const outcome = expect(drained).rejects.toThrow(
      /nothing changed for 5 s .*at-least-once: 0 visible, 10 in flight, 10 held by the local runtime/,
    );
    await vi.advanceTimersByTimeAsync(5_600);
    await outcome;
    await expect(drained).rejects.toBeInstanceOf(DrainTimeoutError);
  });

  it('does not give up before the stall span has passed', async () => {
    const env = fakeEnvironment(() => ({ visible: 3, inFlight: 0, live: live() }));
    let settled = false;
    const drained = waitUntilDrained(env, ['at-least-once'], { stallMs: 5_000, pollMs: 250 }).finally(() => {
      settled = true;
    });
    drained.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(4_500);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(settled).toBe(true);
  });

  it('gives up when reading the queue depths never answers', async () => {
    const env = {
      modes: ['at-least-once'],
      queueDepth: () => new Promise(() => undefined),
    } as unknown as ExperimentEnvironment;
    const drained = waitUntilDrained(env, ['at-least-once'], { stallMs: 5_000, pollMs: 250 });
    const outcome = expect(drained).rejects.toThrow(/reading their depths did not answer within 5 s/);
    await vi.advanceTimersByTimeAsync(5_100);
    await outcome;
  });
});

describe('the drain by delivery round', () => {
  it('records per receive count its records, its failed batches, its first receive and its last batch done', () => {
    const rounds = new RoundRecorder();
    rounds.batchDone([1, 1, 1], { receivedAtMs: 1_000, failed: true }, 1_400);
    rounds.batchDone([1, 1], { receivedAtMs: 1_100, failed: false }, 1_300);
    // A batch mixing first deliveries and a returning record counts in both rounds.
    rounds.batchDone([2, 1], { receivedAtMs: 4_050, failed: false }, 4_500);
    expect(rounds.snapshot()).toEqual([
      { receiveCount: 1, records: 6, failedBatches: 1, firstReceivedAtMs: 1_000, lastDoneAtMs: 4_500 },
      { receiveCount: 2, records: 1, failedBatches: 0, firstReceivedAtMs: 4_050, lastDoneAtMs: 4_500 },
    ]);
  });

  it("merges every mode's rounds by receive count, each done when its last mode is, from the drain's start", () => {
    const round = (receiveCount: number, records: number, failedBatches: number, lastDoneAtMs: number) => ({
      receiveCount,
      records,
      failedBatches,
      firstReceivedAtMs: 0,
      lastDoneAtMs,
    });
    const merged = drainRoundsOf(
      [
        live({ rounds: [round(1, 200, 5, 10_000), round(2, 40, 1, 14_000)] }),
        undefined,
        live({ rounds: [round(1, 200, 3, 10_500), round(2, 30, 0, 13_000), round(3, 10, 0, 17_000)] }),
      ],
      9_000,
    );
    expect(merged).toEqual([
      { receiveCount: 1, records: 400, failedBatches: 8, doneAtMs: 1_500 },
      { receiveCount: 2, records: 70, failedBatches: 1, doneAtMs: 5_000 },
      { receiveCount: 3, records: 10, failedBatches: 0, doneAtMs: 8_000 },
    ]);
    expect(drainRoundsOf([undefined, live()], 0)).toEqual([]);
  });
});

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MODES, type Mode } from '../../contract/topology.js';
import type { EmbeddedEnvironment } from '../../harness/environments/embedded.js';
import { embeddedModeSettings } from '../../harness/environments/embedded-options.js';
import { localVisibilityTimeoutSeconds } from '../../harness/environments/local-timing.js';
import { violations } from '../../harness/report/violations.js';
import type { ExperimentConfig } from '../../harness/run/experiment.js';
import { experimentConfig, replayCommand, runEmbedded } from '../support/embedded-run.js';

/**
 * Random fault schedules on the embedded environment: whatever the rates, seed, batch size and
 * concurrency, effectively-once is exact, at-least-once never loses, at-most-once duplicates only
 * when the environment delivers twice, and no mode applies what was never sent. Bounded for CI
 * (a few small runs, no shrinking: each run is a whole experiment). A failure names the fast-check
 * seed (FAULT_PROPERTY_SEED replays the schedule) and the `npm run experiment` command that replays
 * the run, which is also printed before each run (a timeout prints no assertion). The max receive
 * count is 3, so poison reaches the DLQ in three rounds; a valid event can then be dead-lettered
 * too (three failed deliveries in a row): that is not a loss, and its money is not drift. Some runs
 * draw the operator's runbook: a DynamoDB outage long enough to fill the DLQs, then a redrive, and
 * the invariants must hold after it too (an event dead-lettered again is counted as such, not lost).
 * Every run includes fifo-versioned, and the first run of each suite is that runbook on a new crash
 * seed: a FIFO DLQ hides all but the head of each group from the verifier, so an outage that
 * dead-letters whole accounts is what found issue 23's false "lost".
 */
/** One in `npm test` (the pinned runbook below); `npm run test:soak` runs more (vitest.config.ts). */
const RUNS = Number(process.env.FAULT_PROPERTY_RUNS ?? 1);
const MESSAGES = 40;
const MAX_RECEIVE_COUNT = 3;
/** Starting the emulators and the environments, the verifier, and stopping it all, on a loaded machine. */
const FIXED_COSTS_MS = 90_000;
/** A replacement environment's init after a crash, a kill or a timeout (AWS's init limit). */
const INIT_ALLOWANCE_MS = 10_000;
/**
 * One seed for fast-check's schedules and the runbook's crash seed, printed on a failure:
 * FAULT_PROPERTY_SEED=<it> draws the same schedules and the same runbook again.
 */
const SEED =
  process.env.FAULT_PROPERTY_SEED === undefined
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FAULT_PROPERTY_SEED);
/** The default run's modes and the ordered one, whose DLQ is FIFO. */
const MODES: readonly Mode[] = [...DEFAULT_MODES, 'fifo-versioned'];

const schedule = fc.record({
  seed: fc.stringMatching(/^[a-z0-9]{6}$/).map((suffix) => `prop-${suffix}`),
  accounts: fc.constant<number>(10),
  // Only the pinned example below is the runbook.
  runbook: fc.constant<boolean>(false),
  // When the outage starts, from the first send.
  outageAfterSeconds: fc.constant<number>(1),
  batchSize: fc.constantFrom(1, 5, 10),
  concurrency: fc.constantFrom(2, 3, 5),
  crashRate: fc.constantFrom(0, 0.02),
  producerDuplicateRate: fc.constantFrom(0, 0.05, 0.2),
  redeliveryRate: fc.constantFrom(0, 0.05, 0.2),
  throttleRate: fc.constantFrom(0, 0.05, 0.2),
  killRate: fc.constantFrom(0, 0.05, 0.1),
  poisonRate: fc.constantFrom(0, 0.1),
  // Slow runs are long (a delay beyond the visibility timeout): drawn less often.
  slow: fc.constantFrom(false, false, false, true),
  // An outage that outlasts every receive (it fills the DLQs) is always followed by a redrive.
  outage: fc.constantFrom(false, false, true),
  redrive: fc.boolean(),
});

type ScheduleOf<A> = A extends fc.Arbitrary<infer T> ? T : never;

/**
 * The first schedule of every suite (fast-check counts it in numRuns: FAULT_PROPERTY_RUNS=1 runs
 * it alone): the outage runbook with poison, on a crash seed of its own (printed with the replay
 * command; FAULT_PROPERTY_SEED makes it the same again). The outage starts with the first send, so
 * it dead-letters whole accounts, and 40 events on two accounts put more than 10 of at least one in
 * the FIFO DLQ, more than a sweep can see behind a group's head: the verifier must count the rest,
 * and the test checks that it had to.
 */
const OUTAGE_THEN_REDRIVE: ScheduleOf<typeof schedule> = {
  seed: `prop-${SEED.toString(36).padStart(6, '0').slice(-6)}`,
  accounts: 2,
  runbook: true,
  outageAfterSeconds: 0,
  batchSize: 10,
  concurrency: 2,
  crashRate: 0.02,
  producerDuplicateRate: 0,
  redeliveryRate: 0.05,
  throttleRate: 0,
  killRate: 0,
  poisonRate: 0.1,
  slow: false,
  outage: true,
  redrive: true,
};

describe('fault schedules (property-based, fast-check)', () => {
  let env: EmbeddedEnvironment | undefined;

  afterEach(async () => {
    await env?.stop();
    env = undefined;
  });

  it(
    'effectively-once is exact, at-least-once never loses, nothing unexpected is ever applied',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          schedule,
          async ({
            seed,
            accounts,
            runbook,
            outageAfterSeconds,
            batchSize,
            concurrency,
            crashRate,
            slow,
            outage,
            redrive,
            ...faults
          }) => {
            const visibility = localVisibilityTimeoutSeconds(batchSize, concurrency, MODES.length);
            const cfg = experimentConfig({
              seed,
              modes: MODES,
              messages: MESSAGES,
              accounts,
              batchSize,
              concurrency,
              crashRate,
              maxReceiveCount: MAX_RECEIVE_COUNT,
              faults: {
                ...faults,
                workDelayMs: slow ? slowInvocationMs(batchSize, concurrency) : 0,
                workDelayRate: slow ? 0.25 : 0,
                ...(outage
                  ? { outage: { afterSeconds: outageAfterSeconds, forSeconds: outageSeconds(visibility) } }
                  : {}),
              },
              ...(outage || redrive ? { redrive: { afterSeconds: 0 } } : {}),
            });
            const replay = replayCommand(cfg);
            const budgetMs = runBudgetMs(cfg);
            process.stderr.write(
              `fault property run (FAULT_PROPERTY_RUNS=${RUNS} FAULT_PROPERTY_SEED=${SEED}, budget ${Math.round(budgetMs / 1000)} s): ${replay}\n`,
            );
            try {
              const { report } = await withinBudget(
                (expired) =>
                  runEmbedded(cfg, (started) => {
                    env = started;
                    // The budget ran out while it started: nobody else will stop it.
                    if (expired()) void started.stop();
                  }),
                budgetMs,
                replay,
              );
              // Before the redrive (or without one), and after it: the same invariants.
              const outcomes = (mode: Mode) => {
                const final = report.modes[mode];
                if (!final) throw new Error(`no outcome for ${mode}`);
                return final.redrive ? [{ ...final, ...final.redrive.firstDrain }, final] : [final];
              };
              for (const mode of DEFAULT_MODES) {
                for (const outcome of outcomes(mode)) {
                  expect([...violations(mode, outcome)], `${mode}: ${replay}`).toEqual([]);
                  expect(
                    outcome.appliedOnce + outcome.duplicated + outcome.lost + outcome.deadLettered,
                    `${mode}: ${replay}`,
                  ).toBe(cfg.messages);
                }
              }
              for (const eo of outcomes('effectively-once')) {
                expect(eo, replay).toMatchObject({ duplicated: 0, lost: 0, unexpected: 0, consistent: true });
                expect(eo.deadLettered, replay).toBeGreaterThanOrEqual(eo.poison);
                // Money is either applied once or waiting in the DLQ: never missing, never twice.
                expect(eo.driftCents, replay).toBe(0 - eo.deadLetteredCents); // 0 - x, not -x: toBe tells -0 from 0
              }
              for (const alo of outcomes('at-least-once')) expect(alo.lost, replay).toBe(0);
              // In order and exact, and every event accounted for, the ones a FIFO DLQ hides included.
              for (const fv of outcomes('fifo-versioned')) {
                expect(fv, replay).toMatchObject({
                  lost: 0,
                  duplicated: 0,
                  unexpected: 0,
                  orderViolations: 0,
                });
                expect(fv.appliedOnce + fv.deadLettered, replay).toBe(cfg.messages);
                // Its evidence rides on its credit: no kill or outage can separate the two.
                expect(fv.consistent, replay).toBe(true);
                expect(fv.driftCents, replay).toBe(0 - fv.deadLetteredCents);
              }
              // The runbook dead-letters whole accounts: a sweep sees 10 of a group at most, so the
              // first drain's count must rest on the events it could not see.
              if (runbook) {
                const firstDrain = report.modes['fifo-versioned']?.redrive?.firstDrain;
                const accountIds = report.manifest?.accountIds ?? [];
                const deadByAccount = new Map<string, number>();
                [...(firstDrain?.events?.states ?? '')].forEach((state, index) => {
                  const account = accountIds[index] ?? '';
                  if ('xhp'.includes(state))
                    deadByAccount.set(account, (deadByAccount.get(account) ?? 0) + 1);
                });
                const hidden = [...deadByAccount.values()].reduce((sum, n) => sum + Math.max(0, n - 10), 0);
                expect(
                  hidden,
                  `the outage did not dead-letter more than 10 of an account: ${replay}`,
                ).toBeGreaterThan(0);
                expect(firstDrain?.deadLetteredUnseen ?? 0, replay).toBeGreaterThanOrEqual(hidden);
              }
              // The outage met the consumers' requests (whether it also fills a DLQ depends on how many
              // receives fit in it: batch 1 at concurrency 2 gets through few messages in 20 s).
              if (outage) {
                expect(
                  report.modes['effectively-once']?.runtime?.injected.outageRejections,
                  replay,
                ).toBeGreaterThan(0);
              }
            } finally {
              await env?.stop();
              env = undefined;
            }
          },
        ),
        {
          numRuns: RUNS,
          endOnFailure: true,
          examples: [[OUTAGE_THEN_REDRIVE]],
          seed: SEED,
        },
      );
    },
    // Each run has its own budget; this bounds the sum of the largest ones, and each run's stop.
    RUNS * (WORST_RUN_BUDGET_MS + 30_000),
  );
});

/** Longer than every receive of a message at the max receive count: the outage fills the DLQs. */
function outageSeconds(visibilitySeconds: number): number {
  return visibilitySeconds * MAX_RECEIVE_COUNT + 2;
}

/** A slow invocation outlives its messages' visibility timeout by a second: the class stays drawn. */
function slowInvocationMs(batchSize: number, concurrency: number): number {
  return (localVisibilityTimeoutSeconds(batchSize, concurrency, MODES.length) + 1) * 1000;
}

/**
 * What one drawn run may take on a correct build, derived from what it drew: every invocation of
 * every message's every receive may last its whole function timeout (plus the work delay when
 * slow ones are drawn) after a replacement's init, one batch per poller at a time, plus a
 * visibility timeout per receive for the crash rounds. A bound, not an estimate: the drain itself
 * gives up only when nothing moves.
 */
function runBudgetMs(cfg: ExperimentConfig): number {
  const settings = embeddedModeSettings('powertools-idempotency', {
    modes: DEFAULT_MODES,
    crashRate: cfg.crashRate,
    crashSeed: cfg.seed,
    ...(cfg.batchSize !== undefined ? { batchSize: cfg.batchSize } : {}),
    ...(cfg.concurrency !== undefined ? { concurrency: cfg.concurrency } : {}),
    maxReceiveCount: MAX_RECEIVE_COUNT,
    visibilityTimeoutSeconds: cfg.visibilityTimeoutSeconds,
  });
  const { faults } = cfg;
  // Producer re-sends and the mapping's second copies add deliveries beyond one per event.
  const deliveries = Math.ceil(
    cfg.messages * (1 + faults.producerDuplicateRate) * (1 + faults.redeliveryRate),
  );
  const invocations = Math.ceil(deliveries / settings.batchSize) * settings.maxReceiveCount;
  const invocationMs = INIT_ALLOWANCE_MS + settings.functionTimeoutSeconds * 1000 + faults.workDelayMs;
  const rounds = settings.maxReceiveCount * settings.visibilityTimeoutSeconds * 1000;
  const drain = Math.ceil(invocations / settings.maxConcurrency) * invocationMs + rounds;
  const outageMs = (faults.outage?.forSeconds ?? 0) * 1000;
  // A redrive drains everything once more, at most.
  return FIXED_COSTS_MS + outageMs + drain * (cfg.redrive ? 2 : 1);
}

/** The largest budget any draw can get: batches of one, two pollers, every rate at its highest, slow. */
const WORST_RUN_BUDGET_MS = Math.max(
  ...[2, 3, 5].map((concurrency) =>
    runBudgetMs(
      experimentConfig({
        messages: MESSAGES,
        batchSize: 1,
        concurrency,
        crashRate: 0.02,
        maxReceiveCount: MAX_RECEIVE_COUNT,
        faults: {
          producerDuplicateRate: 0.2,
          redeliveryRate: 0.2,
          workDelayMs: slowInvocationMs(1, concurrency),
          outage: {
            afterSeconds: 1,
            forSeconds: outageSeconds(localVisibilityTimeoutSeconds(1, concurrency, MODES.length)),
          },
        },
        redrive: { afterSeconds: 0 },
      }),
    ),
  ),
);

/** Fails the run once its budget is spent; `expired` tells a late start that it must stop itself. */
async function withinBudget<T>(
  run: (expired: () => boolean) => Promise<T>,
  budgetMs: number,
  replay: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let spent = false;
  const overBudget = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      spent = true;
      reject(new Error(`the run exceeded its budget of ${Math.round(budgetMs / 1000)} s: ${replay}`));
    }, budgetMs);
  });
  try {
    return await Promise.race([run(() => spent), overBudget]);
  } finally {
    clearTimeout(timer);
  }
}

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedEnvironment } from '../../harness/environments/embedded.js';
import { violations } from '../../harness/report/terminal.js';
import { MODE_NAMES } from '../../lib/topology.js';
import { experimentConfig, replayCommand, runEmbedded } from '../support/embedded-run.js';

/**
 * Random fault schedules on the embedded environment: whatever the rates, seed, batch size and
 * concurrency, effectively-once is exact, at-least-once never loses, at-most-once duplicates only
 * when the environment delivers twice, and no mode applies what was never sent. Bounded for CI
 * (a few small runs, no shrinking: each run is a whole experiment). A failure names the fast-check
 * seed (FAULT_PROPERTY_SEED replays the schedule) and the `npm run experiment` command that replays
 * the run, which is also printed before each run (a timeout prints no assertion). The max receive
 * count is 3, so poison reaches the DLQ in three rounds; a valid event can then be dead-lettered
 * too (three failed deliveries in a row): that is not a loss, and its money is not drift.
 */
const RUNS = Number(process.env.FAULT_PROPERTY_RUNS ?? 3);
const SEED =
  process.env.FAULT_PROPERTY_SEED === undefined ? undefined : Number(process.env.FAULT_PROPERTY_SEED);

const schedule = fc.record({
  seed: fc.stringMatching(/^[a-z0-9]{6}$/).map((suffix) => `prop-${suffix}`),
  batchSize: fc.constantFrom(1, 5, 10),
  concurrency: fc.constantFrom(2, 3, 5),
  crashRate: fc.constantFrom(0, 0.02),
  producerDuplicateRate: fc.constantFrom(0, 0.05, 0.2),
  redeliveryRate: fc.constantFrom(0, 0.05, 0.2),
  throttleRate: fc.constantFrom(0, 0.05, 0.2),
  killRate: fc.constantFrom(0, 0.05, 0.1),
  poisonRate: fc.constantFrom(0, 0.1),
  // Slow runs are long (a delay beyond the 10 s visibility timeout): drawn less often.
  workDelayMs: fc.constantFrom(0, 0, 0, 11_000),
});

describe('fault schedules (property-based, fast-check)', () => {
  let env: EmbeddedEnvironment | undefined;

  afterEach(async () => {
    await env?.stop();
    env = undefined;
  });

  it('effectively-once is exact, at-least-once never loses, nothing unexpected is ever applied', async () => {
    await fc.assert(
      fc.asyncProperty(schedule, async ({ seed, batchSize, concurrency, crashRate, ...faults }) => {
        const cfg = experimentConfig({
          seed,
          messages: 40,
          batchSize,
          concurrency,
          crashRate,
          maxReceiveCount: 3,
          faults: { ...faults, workDelayRate: faults.workDelayMs > 0 ? 0.25 : 0 },
        });
        const replay = replayCommand(cfg);
        process.stderr.write(`fault property run: ${replay}\n`);
        try {
          const { report } = await runEmbedded(cfg, (started) => {
            env = started;
          });
          for (const mode of MODE_NAMES) {
            const outcome = report.modes[mode];
            if (!outcome) throw new Error(`no outcome for ${mode}`);
            expect([...violations(mode, outcome)], `${mode}: ${replay}`).toEqual([]);
            expect(
              outcome.appliedOnce + outcome.duplicated + outcome.lost + outcome.deadLettered,
              `${mode}: ${replay}`,
            ).toBe(cfg.messages);
          }
          const eo = report.modes['effectively-once'];
          expect(eo, replay).toMatchObject({ duplicated: 0, lost: 0, unexpected: 0, consistent: true });
          expect(eo?.deadLettered, replay).toBeGreaterThanOrEqual(eo?.poison ?? 0);
          // Money is either applied once or waiting in the DLQ: never missing, never twice.
          expect(eo?.driftCents, replay).toBe(0 - (eo?.deadLetteredCents ?? 0)); // 0 - x, not -x: toBe tells -0 from 0
          expect(report.modes['at-least-once']?.lost, replay).toBe(0);
        } finally {
          await env?.stop();
          env = undefined;
        }
      }),
      { numRuns: RUNS, endOnFailure: true, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
  }, 600_000);
});

import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MODES, type Mode } from '../../contract/topology.js';
import type { EmbeddedEnvironment } from '../../harness/environments/embedded.js';
import { violations } from '../../harness/report/violations.js';
import type { ExperimentReport } from '../../harness/run/experiment.js';
import { experimentConfig, type RunOverrides, replayCommand, runEmbedded } from '../support/embedded-run.js';

/**
 * Every fault the experiment can inject, with fixed seeds, on the embedded target: effectively-once
 * stays exact, at-least-once never loses, at-most-once duplicates only when the environment
 * delivers a record twice — and each fault is seen in the report's counts.
 */
describe('the experiment under injected faults (fixed seeds)', () => {
  let env: EmbeddedEnvironment | undefined;

  afterEach(async () => {
    await env?.stop();
    env = undefined;
  });

  async function run(overrides: RunOverrides) {
    const cfg = experimentConfig(overrides);
    const result = await runEmbedded(cfg, (started) => {
      env = started;
    });
    return { cfg, ...result, mode: (mode: Mode) => outcomeOf(result.report, mode, replayCommand(cfg)) };
  }

  function outcomeOf(report: ExperimentReport, mode: Mode, replay: string) {
    const outcome = report.modes[mode];
    if (!outcome) throw new Error(`no outcome for ${mode}; replay: ${replay}`);
    return outcome;
  }

  function expectTheModesKeepTheirPromises(report: ExperimentReport, replay: string): void {
    for (const mode of DEFAULT_MODES) {
      const outcome = outcomeOf(report, mode, replay);
      expect([...violations(mode, outcome)], `${mode} broke a promise; replay: ${replay}`).toEqual([]);
      expect(outcome.consistent, `${mode} ledger equals balances; replay: ${replay}`).toBe(true);
      expect(outcome.unexpected, `${mode} unexpected; replay: ${replay}`).toBe(0);
    }
  }

  it('poison bodies and producer re-sends: dead-lettered by the work-first modes, lost by at-most-once, re-sends applied twice except by effectively-once', async () => {
    const { cfg, report, mode } = await run({
      seed: 'it-producer',
      maxReceiveCount: 2,
      faults: { poisonRate: 0.1, producerDuplicateRate: 0.1 },
    });
    const replay = replayCommand(cfg);
    const eo = mode('effectively-once');
    expect(eo.poison, replay).toBeGreaterThan(0);
    expect(eo.producerDuplicates, replay).toBeGreaterThan(0);
    expect(eo).toMatchObject({
      appliedOnce: cfg.messages - eo.poison,
      duplicated: 0,
      lost: 0,
      deadLettered: eo.poison,
      driftCents: 0,
      deadLetteredUnreadable: 0,
    });
    expect(mode('at-least-once')).toMatchObject({
      lost: 0,
      deadLettered: eo.poison,
      duplicated: eo.producerDuplicates,
      deadLetteredUnreadable: 0,
    });
    // at-most-once deletes before it validates: every poison body is lost, every re-send applied.
    expect(mode('at-most-once')).toMatchObject({
      lost: eo.poison,
      deadLettered: 0,
      duplicated: eo.producerDuplicates,
    });
    expectTheModesKeepTheirPromises(report, replay);
  });

  it('redeliveries, throttling, lost responses, conflicts and kills at any instant: effectively-once exact, at-least-once never loses', async () => {
    const { cfg, report, mode } = await run({
      seed: 'it-runtime',
      crashRate: 0.02,
      faults: { redeliveryRate: 0.1, throttleRate: 0.2, killRate: 0.2 },
    });
    const replay = replayCommand(cfg);
    const injected = DEFAULT_MODES.map((name) => mode(name).runtime?.injected);
    const total = (key: keyof NonNullable<(typeof injected)[number]>) =>
      injected.reduce((sum, counts) => sum + (counts?.[key] ?? 0), 0);
    expect(total('redelivered'), replay).toBeGreaterThan(0);
    expect(total('throttled') + total('serverErrors'), replay).toBeGreaterThan(0);
    expect(total('lostResponses'), replay).toBeGreaterThan(0);
    expect(total('conflicts'), replay).toBeGreaterThan(0);
    expect(total('kills'), replay).toBeGreaterThan(0);

    expect(mode('effectively-once'), replay).toMatchObject({
      appliedOnce: cfg.messages,
      duplicated: 0,
      lost: 0,
      driftCents: 0,
    });
    expect(mode('at-least-once').lost, replay).toBe(0);
    expect(mode('at-least-once').duplicated, replay).toBeGreaterThan(0);
    // The mapping delivered records twice on its own: at-most-once duplicates too.
    expect(mode('at-most-once').duplicated, replay).toBeGreaterThan(0);
    // Conflicts cancel effectively-once's transactions, and its bounded retry takes them.
    expect(mode('effectively-once').retriedCancellations, replay).toBeGreaterThan(0);
    expectTheModesKeepTheirPromises(report, replay);
  });

  it('slow consumers outliving the visibility timeout, on one hot account: overruns counted, effectively-once exact', async () => {
    const { cfg, report, mode } = await run({
      seed: 'it-slow',
      messages: 60,
      accounts: 1,
      concurrency: 8,
      // Set, not sized for 8 batches in flight: a slow invocation must outlive it, and sooner is cheaper.
      visibilityTimeoutSeconds: 6,
      faults: { workDelayMs: 7_000, workDelayRate: 0.5 },
    });
    const replay = replayCommand(cfg);
    const overruns = DEFAULT_MODES.reduce(
      (sum, name) => sum + (mode(name).runtime?.visibilityOverruns ?? 0),
      0,
    );
    expect(overruns, replay).toBeGreaterThan(0);
    expect(mode('effectively-once'), replay).toMatchObject({
      appliedOnce: cfg.messages,
      duplicated: 0,
      lost: 0,
      driftCents: 0,
    });
    // Two invocations held the same messages: the modes without a guard applied them twice.
    expect(mode('at-least-once').duplicated, replay).toBeGreaterThan(0);
    expect(mode('at-least-once').lost, replay).toBe(0);
    expect(mode('effectively-once').suppressedDuplicates, replay).toBeGreaterThan(0);
    expectTheModesKeepTheirPromises(report, replay);
  });
});

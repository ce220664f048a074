import { afterAll, describe, expect, it } from 'vitest';
import type { EmbeddedEnvironment } from '../../harness/environments/embedded.js';
import { formatSummary } from '../../harness/report/terminal.js';
import { experimentConfig, replayCommand, runEmbedded } from '../support/embedded-run.js';

/**
 * `--redrive` end to end on the embedded target: crashes at max receive count 1 dead-letter events
 * (some of them applied before the crash), the redrive moves every DLQ back, and the second drain
 * and verification show what each mode made of the copies.
 */
describe('the redrive (embedded)', () => {
  let env: EmbeddedEnvironment | undefined;

  afterAll(async () => {
    await env?.stop();
  });

  it('effectively-once stays exact through the redrive; at-least-once duplicates what had been applied', async () => {
    const cfg = experimentConfig({
      messages: 30,
      seed: 'redrive-it',
      crashRate: 0.2,
      maxReceiveCount: 1,
      modes: ['at-least-once', 'effectively-once'],
      visibilityTimeoutSeconds: 4,
      redrive: { afterSeconds: 0 },
    });
    const phases: string[] = [];
    const { report } = await runEmbedded(
      cfg,
      (started) => {
        env = started;
      },
      { phase: (message) => phases.push(message) },
    );
    const replay = replayCommand(cfg);
    const summary = formatSummary(report, 'r.json');
    const context = `${replay}\n${summary}`;

    expect(
      phases.some((phase) => /^redriving \d+ messages from \d+ DLQs?/.test(phase)),
      context,
    ).toBe(true);
    expect(phases, context).toContain('waiting until every queue is drained again (after the redrive)');
    expect(summary).toContain('after the redrive');
    expect(report.redrive?.afterSeconds).toBe(0);

    const exact = report.modes['effectively-once'];
    const alo = report.modes['at-least-once'];
    if (!exact?.redrive || !alo?.redrive) throw new Error(`no redrive section\n${context}`);
    // Crashes at max receive count 1 dead-letter whole batches: something was there to redrive.
    expect(exact.redrive.redriven, context).toBeGreaterThan(0);
    expect(alo.redrive.redriven, context).toBeGreaterThan(0);

    const after = exact.redrive.after;
    expect(after.lost, context).toBe(0);
    expect(after.duplicated, context).toBe(0);
    expect(after.unexpected, context).toBe(0);
    expect(exact.redrive.duplicatedByRedrive, context).toBe(0);
    expect(exact.redrive.lost, context).toBe(0);
    // An event dead-lettered again is counted as dead-lettered, not lost: the DLQ holds its money.
    expect(after.driftCents, context).toBe(-after.deadLetteredCents);
    expect(after.deadLettered, context).toBe(exact.redrive.deadLetteredAgain);
    expect(exact.redrive.appliedAfterRedrive + exact.redrive.deadLetteredAgain, context).toBe(
      exact.deadLettered,
    );
    expect(after.appliedOnce + after.deadLettered, context).toBe(after.produced);

    // at-least-once: the copies of events applied before their crash are applied again.
    expect(alo.redrive.after.lost, context).toBe(0);
    expect(alo.redrive.duplicatedByRedrive, context).toBeGreaterThan(0);
    expect(alo.redrive.after.extraApplications, context).toBeGreaterThan(alo.extraApplications);

    for (const mode of cfg.modes) {
      const outcome = report.modes[mode];
      expect(outcome?.consistent, `${mode} before\n${context}`).toBe(true);
      expect(outcome?.redrive?.after.consistent, `${mode} after\n${context}`).toBe(true);
    }
  });
});

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Mode } from '../../contract/topology.js';
import type { EmbeddedEnvironment } from '../../harness/environments/embedded.js';
import { formatFaultTable } from '../../harness/report/fault-table.js';
import { writeRunReport } from '../../harness/report/html/write.js';
import { formatSummary } from '../../harness/report/terminal.js';
import type { ExperimentReport } from '../../harness/run/experiment.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { browserFor } from '../support/browser.js';
import { experimentConfig, replayCommand, runEmbedded } from '../support/embedded-run.js';

/**
 * The operator's runbook end to end on the embedded target: a DynamoDB outage (--outage-after 2
 * --outage-for 30, longer than visibility × max receive count 2) dead-letters valid events, and
 * crashes dead-letter some after they were applied; the redrive waits until the outage is over,
 * moves every DLQ back, and the second drain and verification show what each mode made of the
 * copies. One whole run for both (the suite's runs are its slowest part).
 */
describe('the redrive (embedded)', () => {
  let env: EmbeddedEnvironment | undefined;

  afterAll(async () => {
    await env?.stop();
  });

  it('an outage dead-letters valid events; effectively-once stays exact through the redrive, at-least-once duplicates what had been applied', async () => {
    const cfg = experimentConfig({
      messages: 100,
      seed: 'redrive-it',
      crashRate: 0.1,
      maxReceiveCount: 2,
      modes: ['at-least-once', 'effectively-once'],
      redrive: { afterSeconds: 0 },
      faults: { outage: { afterSeconds: 2, forSeconds: 30 } },
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
    expect(summary).toContain('faults: DynamoDB outage for 30 s from 2 s after the first send');
    expect(formatFaultTable(report)).toContain('outage 503s');
    for (const mode of cfg.modes) {
      const outcome = report.modes[mode];
      const first = outcome?.redrive?.firstDrain;
      const rejected = first?.runtime?.injected.outageRejections ?? 0;
      // The outage refused the handlers' requests, and its valid events went to the DLQ.
      expect(rejected, `${mode}\n${context}`).toBeGreaterThan(0);
      expect(outcome?.poison, context).toBe(0);
      expect(first?.deadLettered, `${mode}\n${context}`).toBeGreaterThan(0);
      expect(outcome?.redrive?.redriven, `${mode}\n${context}`).toBeGreaterThanOrEqual(
        first?.deadLettered ?? 0,
      );
      // The redrive waited for the end of the outage: no copy met it (the report's runtime is the end's).
      expect(outcome?.runtime?.injected.outageRejections, `${mode}\n${context}`).toBe(rejected);
    }

    // The report leads with the final state; the first drain is under redrive.firstDrain.
    const before = exact.redrive.firstDrain;
    // Before the redrive: effectively-once lost nothing, its missing money is in the DLQ.
    expect(before, context).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    expect(before.driftCents, context).toBe(-before.deadLetteredCents);

    const after = exact;
    expect(after.lost, context).toBe(0);
    expect(after.duplicated, context).toBe(0);
    expect(after.unexpected, context).toBe(0);
    expect(exact.redrive.duplicatedByRedrive, context).toBe(0);
    expect(exact.redrive.lost, context).toBe(0);
    // An event dead-lettered again is counted as dead-lettered, not lost: the DLQ holds its money.
    expect(after.driftCents, context).toBe(-after.deadLetteredCents);
    expect(after.deadLettered, context).toBe(exact.redrive.deadLetteredAgain);
    expect(exact.redrive.appliedAfterRedrive + exact.redrive.deadLetteredAgain, context).toBe(
      before.deadLettered,
    );
    expect(after.appliedOnce + after.deadLettered, context).toBe(after.produced);

    // at-least-once: the copies of events applied before their crash are applied again.
    expect(alo.lost, context).toBe(0);
    expect(alo.redrive.duplicatedByRedrive, context).toBeGreaterThan(0);
    expect(alo.extraApplications, context).toBeGreaterThan(alo.redrive.firstDrain.extraApplications);

    for (const mode of cfg.modes) {
      const outcome = report.modes[mode];
      expect(outcome?.redrive?.firstDrain.consistent, `${mode} before\n${context}`).toBe(true);
      expect(outcome?.consistent, `${mode} after\n${context}`).toBe(true);
    }

    await expectPageLeadsWithFinalState(report, replay, cfg.modes);
  });
});

/**
 * The run's page in a real browser: each mode's card and first grid show the state after the
 * redrive, the first drain's grid follows it, labelled. Without a browser: skipped with one line,
 * or failed under CI=true (test/support/browser.ts).
 */
async function expectPageLeadsWithFinalState(
  report: ExperimentReport,
  replay: string,
  modes: readonly Mode[],
): Promise<void> {
  const launched = await browserFor('the redrive page in a browser', [
    '--disable-gpu',
    '--disable-background-networking',
    '--no-first-run',
  ]);
  if ('skipped' in launched) return;
  try {
    const dir = join(PROJECT_ROOT, 'reports', 'screenshots');
    mkdirSync(dir, { recursive: true });
    const htmlPath = await writeRunReport(report, {
      reportJsonPath: join(dir, `${report.runId}.json`),
      replayCommand: replay,
    });
    const page = await launched.browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(`file://${htmlPath}`, { waitUntil: 'load' });
    for (const mode of modes) {
      const final = report.modes[mode];
      const first = final?.redrive?.firstDrain;
      if (!final?.events || !first?.events) throw new Error(`${mode}: no per-event detail`);
      const card = page.locator('.glance article', { has: page.locator(`h2:text-is("${mode}")`) });
      expect(await card.locator('.big > div').first().locator('b').textContent(), `${mode} lost`).toBe(
        String(final.lost),
      );
      expect(
        await card.locator('.big > div').nth(2).locator('b').textContent(),
        `${mode} dead-lettered`,
      ).toBe(String(final.deadLettered));
      expect(await card.locator('.when').textContent(), mode).toContain(
        `The first drain: ${first.lost} lost, ${first.duplicated} duplicated, ${first.deadLettered} dead-lettered`,
      );
      // The first grid is the final state, the second the first drain's: cell by cell, as the JSON says.
      const states = async (key: string) =>
        (
          await page
            .locator(`.grid[data-mode="${key}"] [role="gridcell"]:not(.e)`)
            .evaluateAll((cells) => cells.map((cell) => cell.className.split(' ')[1]))
        ).join('');
      expect(await states(mode), `${mode} final grid`).toBe(final.events.states);
      expect(await states(`${mode} in the first drain`), `${mode} first-drain grid`).toBe(
        first.events.states,
      );
      expect(final.events.states, mode).not.toBe(first.events.states);
    }
    await page.screenshot({ path: join(dir, `${report.runId}-redrive.png`), fullPage: true });
  } finally {
    await launched.browser.close();
  }
}

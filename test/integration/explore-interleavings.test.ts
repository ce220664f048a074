import { describe, expect, it } from 'vitest';
import type { Mode } from '../../contract/topology.js';
import type { ExploreReport } from '../../harness/studies/explore/report.js';
import { runNpmScript } from '../support/cli.js';

/**
 * `npm run explore -- --interleavings` for every mode (test:soak: about 7 minutes on the 2-core
 * machine): every schedule of two invocations in flight at once, and what issue 42 asks of each
 * mode. npm test runs two-deliveries without deadlines for three modes (cores.test.ts) and the
 * API's cases (explore-api.test.ts).
 */
describe('npm run explore -- --interleavings, every mode', () => {
  it('exact where the design says so; credit-then-marker duplicates with no fault; at-most-once only past its delete', async () => {
    const run = await runNpmScript('explore', ['--interleavings', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as ExploreReport;
    const schedules = (mode: Mode) =>
      report.modes.find((each) => each.mode === mode)?.interleavings?.flatMap((each) => each.schedules) ?? [];
    const counts = (run: ReturnType<typeof schedules>[number]) =>
      (run.detail as { counts: { duplicated: number; lost: number }; exact: boolean }).counts;
    const exact = (run: ReturnType<typeof schedules>[number]) => (run.detail as { exact: boolean }).exact;

    for (const mode of [
      'effectively-once',
      'entry-upsert',
      'state-upsert',
      'fifo-versioned',
      'charge-with-key',
    ] as const) {
      const runs = schedules(mode);
      expect(runs.length, mode).toBeGreaterThan(10);
      expect(
        runs.filter((each) => !exact(each)).map((each) => each.schedule),
        mode,
      ).toEqual([]);
    }
    expect(
      schedules('credit-then-marker').some((each) => !each.injected && counts(each).duplicated > 0),
    ).toBe(true);
    expect(schedules('at-least-once').some((each) => counts(each).duplicated > 0)).toBe(true);
    for (const each of schedules('at-most-once').filter((one) => counts(one).duplicated > 0)) {
      expect(each.held, each.schedule).toBe(true);
      expect(each.summary, each.schedule).toContain('both passed the delete');
    }
    // Powertools: a duplicate only where A's deadline passed between its credit and COMPLETED.
    for (const mode of ['powertools-idempotency', 'powertools-message-id'] as const) {
      for (const each of schedules(mode).filter((one) => counts(one).duplicated > 0)) {
        expect(each.schedule, mode).toContain('A-timeout');
      }
    }
    const hung = report.modes.flatMap((mode) =>
      (mode.interleavings ?? []).flatMap((each) => each.schedules.filter((one) => one.timedOut)),
    );
    expect(hung.map((each) => each.schedule)).toEqual([]);
  }, 1_600_000);
});

import { describe, expect, it } from 'vitest';
import { runNpmScript } from '../support/cli.js';

/** The scripts that run whole experiments, each at its smallest: they must work, not measure. */
describe('the experiment scripts at their smallest', () => {
  it('npm run sweep: one setting, one repeat, a few messages; writes its report', async () => {
    const result = await runNpmScript('sweep', [
      '--messages',
      '10',
      '--batch-sizes',
      '10',
      '--crash-rates',
      '0',
      '--repeats',
      '1',
    ]);

    expect(result.code, result.stderr).toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/reports\/sweep-\S+\.json/);
  }, 240_000);

  it('npm run bench:default-run: one run of one mode, clean, its median printed', async () => {
    const result = await runNpmScript('bench:default-run', [
      '--runs',
      '1',
      '--',
      '--messages',
      '20',
      '--modes',
      'effectively-once',
    ]);

    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/this checkout: median [\d.]+ s/);
  }, 240_000);

  it('npm run bench: --quick with one mode and a few messages; its table, its exact run and its report', async () => {
    const result = await runNpmScript('bench', [
      '--quick',
      '--modes',
      'effectively-once',
      '--messages',
      '20',
      '--read-cost',
      '0',
    ]);

    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    // The grid's one cell, run end to end and at its floor, with the money exact.
    expect(result.stdout, result.stdout).toMatch(/^ +10 +5 +effectively-once +[\d.]+ .* yes\s*$/m);
    expect(result.stdout).toMatch(/^effectively-once +[\d.]+ +4\.1 /m);
    expect(result.stdout).toMatch(/report: reports\/bench-\S+\.json/);
  }, 240_000);
});

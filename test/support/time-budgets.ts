import type { Reporter, TestModule } from 'vitest/node';

const WHOLE_RUN_PROJECTS = ['runs', 'soak'];

/**
 * Time made visible, never a failure: at the end of a run, each whole-run file's time against its
 * budget (vitest.config.ts), a warning by name for any over it or without one, and the sums. These
 * machines are shared and noisy, so a slow file is a line to read, not a red suite.
 */
export class TimeBudgets implements Reporter {
  /** Seconds by `<project> <file>`. */
  constructor(private readonly budgetsSeconds: Readonly<Record<string, number>>) {}

  /** When the first whole-run file started and the last one ended: their wall time, side by side. */
  private firstStart = Number.POSITIVE_INFINITY;
  private lastEnd = 0;

  onTestModuleStart(module: TestModule): void {
    if (WHOLE_RUN_PROJECTS.includes(module.project.name))
      this.firstStart = Math.min(this.firstStart, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    if (WHOLE_RUN_PROJECTS.includes(module.project.name)) this.lastEnd = Math.max(this.lastEnd, Date.now());
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .filter((module) => WHOLE_RUN_PROJECTS.includes(module.project.name))
      .map((module) => ({
        file: module.relativeModuleId,
        seconds: module.diagnostic().duration / 1000,
        budget: this.budgetsSeconds[`${module.project.name} ${module.relativeModuleId}`],
      }));
    if (rows.length === 0) return;
    const seconds = (value: number) => `${value.toFixed(0).padStart(4)} s`;
    const lines = ['', 'whole runs against their time budgets (each file alone; side by side they overlap):'];
    const warnings: string[] = [];
    for (const row of rows) {
      const of = row.budget === undefined ? 'no budget' : `of ${row.budget} s`;
      lines.push(`  ${row.file.padEnd(48)} ${seconds(row.seconds)} ${of}`);
      if (row.budget === undefined)
        warnings.push(`warning: ${row.file} has no time budget in vitest.config.ts`);
      else if (row.seconds > row.budget)
        warnings.push(
          `warning: ${row.file} took ${row.seconds.toFixed(0)} s, over its ${row.budget} s budget`,
        );
    }
    const total = rows.reduce((sum, row) => sum + row.seconds, 0);
    const budget = rows.reduce((sum, row) => sum + (row.budget ?? 0), 0);
    lines.push(`  ${'total'.padEnd(48)} ${seconds(total)} of ${budget} s`);
    if (this.lastEnd > this.firstStart)
      lines.push(`  ${'wall time'.padEnd(48)} ${seconds((this.lastEnd - this.firstStart) / 1000)}`);
    lines.push(...warnings);
    if (warnings.length > 0) lines.push('(never a failure: docs/testing.md, "How long it takes")');
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}

import type { Reporter, TestModule } from 'vitest/node';

const WHOLE_RUN_PROJECTS = ['runs', 'soak'];

/**
 * Time made visible, never a failure: at the end of a run, each whole-run file's time against its
 * budget (vitest.config.ts), a warning by name for any over it or without one, and the sums. These
 * machines are shared and noisy, so a slow file is a line to read, not a red suite.
 */
/** A phase of the suite (projects that run together) and the wall seconds it may take. */
export interface PhaseBudget {
  readonly name: string;
  readonly projects: readonly string[];
  readonly seconds: number;
}

export class TimeBudgets implements Reporter {
  /** Seconds by `<project> <file>`, and the phases' wall seconds. */
  constructor(
    private readonly budgetsSeconds: Readonly<Record<string, number>>,
    private readonly phases: readonly PhaseBudget[] = [],
  ) {}

  /** When each phase's first file started and its last one ended: its wall time. */
  private readonly spans = new Map<string, { start: number; end: number }>();

  private phaseOf(module: TestModule): PhaseBudget | undefined {
    return this.phases.find((phase) => phase.projects.includes(module.project.name));
  }

  onTestModuleStart(module: TestModule): void {
    const phase = this.phaseOf(module);
    if (!phase) return;
    const span = this.spans.get(phase.name) ?? { start: Date.now(), end: 0 };
    this.spans.set(phase.name, { ...span, start: Math.min(span.start, Date.now()) });
  }

  onTestModuleEnd(module: TestModule): void {
    const phase = this.phaseOf(module);
    const span = phase && this.spans.get(phase.name);
    if (phase && span) this.spans.set(phase.name, { ...span, end: Math.max(span.end, Date.now()) });
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .filter((module) => WHOLE_RUN_PROJECTS.includes(module.project.name))
      .map((module) => ({
        file: module.relativeModuleId,
        seconds: module.diagnostic().duration / 1000,
        budget: this.budgetsSeconds[`${module.project.name} ${module.relativeModuleId}`],
      }));
    // A phase only when all its projects ran: `npm run test:unit` is not the cheap phase.
    const ran = new Set(modules.map((module) => module.project.name));
    const walls = this.phases.flatMap((phase) => {
      const span = this.spans.get(phase.name);
      const whole = phase.projects.every((project) => ran.has(project));
      return whole && span && span.end > span.start
        ? [{ phase, seconds: (span.end - span.start) / 1000 }]
        : [];
    });
    if (rows.length === 0 && walls.length === 0) return;
    const seconds = (value: number) => `${value.toFixed(0).padStart(4)} s`;
    const lines = [
      '',
      'whole runs against their time budgets (each file alone; side by side they overlap), and each phase:',
    ];
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
    if (rows.length > 0) {
      const total = rows.reduce((sum, row) => sum + row.seconds, 0);
      const budget = rows.reduce((sum, row) => sum + (row.budget ?? 0), 0);
      lines.push(`  ${'total'.padEnd(48)} ${seconds(total)} of ${budget} s`);
    }
    for (const wall of walls) {
      lines.push(
        `  ${`${wall.phase.name}, wall time`.padEnd(48)} ${seconds(wall.seconds)} of ${wall.phase.seconds} s`,
      );
      if (wall.seconds > wall.phase.seconds)
        warnings.push(
          `warning: ${wall.phase.name} took ${wall.seconds.toFixed(0)} s of wall time, over its ${wall.phase.seconds} s budget`,
        );
    }
    lines.push(...warnings);
    if (warnings.length > 0) lines.push('(never a failure: docs/testing.md, "How long it takes")');
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}

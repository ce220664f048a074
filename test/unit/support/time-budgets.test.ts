import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TestModule } from 'vitest/node';
import { TimeBudgets } from '../../support/time-budgets.js';

/** A finished test file as the reporter sees it. */
function file(project: string, path: string, seconds: number): TestModule {
  return {
    project: { name: project },
    relativeModuleId: path,
    diagnostic: () => ({ duration: seconds * 1000 }),
  } as unknown as TestModule;
}

/** What the reporter writes, on fake timers (the phases' wall time is Date.now's). */
function capturedStdout(): string[] {
  vi.useFakeTimers();
  const printed: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
    printed.push(String(text));
    return true;
  });
  return printed;
}

describe('TimeBudgets (the suite prints time, never fails on it)', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("prints each whole-run file and each phase's wall time against its budget, and warns by name when over", () => {
    const printed = capturedStdout();
    const reporter = new TimeBudgets({ 'runs test/a.test.ts': 30, 'runs test/b.test.ts': 30 }, [
      { name: 'cheap', projects: ['unit'], seconds: 10 },
      { name: 'whole runs', projects: ['runs'], seconds: 50 },
    ]);
    const unit = file('unit', 'test/u.test.ts', 8);
    const a = file('runs', 'test/a.test.ts', 20);
    const b = file('runs', 'test/b.test.ts', 45);

    vi.setSystemTime(0);
    reporter.onTestModuleStart(unit);
    vi.setSystemTime(8_000);
    reporter.onTestModuleEnd(unit);
    reporter.onTestModuleStart(a);
    reporter.onTestModuleStart(b);
    vi.setSystemTime(28_000);
    reporter.onTestModuleEnd(a);
    vi.setSystemTime(68_000);
    reporter.onTestModuleEnd(b);
    reporter.onTestRunEnd([unit, a, b]);

    const text = printed.join('');
    expect(text).toMatch(/test\/a\.test\.ts +20 s of 30 s/);
    expect(text).toMatch(/total +65 s of 60 s/);
    expect(text).toMatch(/cheap, wall time +8 s of 10 s/);
    expect(text).toMatch(/whole runs, wall time +60 s of 50 s/);
    expect(text).toContain('warning: test/b.test.ts took 45 s, over its 30 s budget');
    expect(text).toContain('warning: whole runs took 60 s of wall time, over its 50 s budget');
    expect(text).not.toContain('warning: cheap');
  });

  it('prints a phase only when all its projects ran (one project alone is not the phase)', () => {
    const printed = capturedStdout();
    const reporter = new TimeBudgets({}, [{ name: 'cheap', projects: ['unit', 'infra'], seconds: 10 }]);
    const unit = file('unit', 'test/u.test.ts', 30);
    vi.setSystemTime(0);
    reporter.onTestModuleStart(unit);
    vi.setSystemTime(30_000);
    reporter.onTestModuleEnd(unit);
    reporter.onTestRunEnd([unit]);
    expect(printed.join('')).toBe('');
  });
});

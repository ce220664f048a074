/**
 * `npm run bench:default-run`: times the default `npm run experiment` end to end, several times in a
 * row, each in a fresh process as a user runs it, and checks each run for what must hold: no
 * timeout, no visibility overrun, and the modes' signatures. With --compare <checkout>, the runs
 * alternate with the same command in another checkout of this project (say, the previous commit),
 * so both are measured side by side under the same load.
 *
 *   npm run bench:default-run                       10 runs, random seeds
 *   npm run bench:default-run -- --runs 5 --compare ../before
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { MODES, type Mode } from '../../contract/topology.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { type ParsedOptions, parseOptions } from '../options/parse.js';
import { type Finished, runEntryPoint } from '../options/run.js';
import { UsageError } from '../options/usage-error.js';
import { violations } from '../report/violations.js';
import type { ExperimentReport, ModeReport } from '../run/experiment.js';
import { spread } from '../studies/benchmarks/spread.js';
import type { DefaultRunTiming } from '../studies/figures/run-tables.js';

type RunTiming = DefaultRunTiming;

function main({ values: { runs, compare }, passThrough }: ParsedOptions<'bench:default-run'>): Finished {
  // Refused now, not after ten failed runs; the compared checkout reads them with its own parser.
  try {
    const { values } = parseOptions('experiment', passThrough);
    // Each run would print the experiment's help instead of a report, and count as failed.
    if (values.help) throw new UsageError('--help is not a run option (it would replace every report)');
    if (values.json) throw new UsageError('--json is not needed: the bench passes it to every run');
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`after --, for the experiment: ${error.message}`);
    throw error;
  }
  const checkouts = [PROJECT_ROOT, ...(compare ? [resolve(compare)] : [])];
  const timings: RunTiming[] = [];
  for (let index = 0; index < runs; index++) {
    const seed = `timing-${index + 1}`;
    for (const checkout of checkouts) {
      const timing = timeOneRun(checkout, seed, passThrough);
      timings.push(timing);
      const p = timing.phasesMs;
      process.stderr.write(
        `run ${index + 1}/${runs} ${label(checkout)} seed ${timing.seed}: ${(timing.wallMs / 1000).toFixed(1)} s` +
          (p
            ? ` (startup ${s(p.startup)}, produce ${s(p.produce)}, drain ${s(p.drain)}${rounds(timing)}, verify ${s(p.verify)})`
            : '') +
          (timing.slowestInvocationMs !== undefined
            ? `, slowest invocation ${s(timing.slowestInvocationMs)} of ${timing.functionTimeoutSeconds} s`
            : '') +
          `, ${timing.timeouts} timeouts, ${timing.overruns} overruns` +
          `${timing.problems.length > 0 ? ` — ${timing.problems.join('; ')}` : ''}\n`,
      );
    }
  }
  const medians = checkouts.map((checkout) => {
    const walls = timings.filter((t) => t.checkout === checkout).map((t) => t.wallMs);
    return { checkout, medianMs: median(walls), minMs: Math.min(...walls), maxMs: Math.max(...walls) };
  });
  for (const m of medians) {
    process.stdout.write(
      `${label(m.checkout)}: median ${s(m.medianMs)} (min ${s(m.minMs)}, max ${s(m.maxMs)}) over ${runs} runs\n`,
    );
  }
  const [self, other] = medians;
  if (self && other)
    process.stdout.write(
      `ratio of medians (this ÷ compared): ${(self.medianMs / other.medianMs).toFixed(2)}\n`,
    );
  const failed = timings.filter((t) => t.problems.length > 0 || t.timeouts > 0 || t.overruns > 0);
  const ownFailures = failed.filter((t) => t.checkout === PROJECT_ROOT);
  process.stdout.write(
    `${ownFailures.length === 0 ? 'every run' : `${ownFailures.length} run(s) NOT`} clean here: 0 timeouts, 0 overruns, signatures kept\n`,
  );
  const reportsDir = join(PROJECT_ROOT, 'reports');
  mkdirSync(reportsDir, { recursive: true });
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const path = join(reportsDir, `bench-default-run-${stamp}.json`);
  writeFileSync(path, `${JSON.stringify({ runs, extraArgs: passThrough, medians, timings }, null, 2)}\n`);
  return { exitCode: ownFailures.length === 0 ? 0 : 1, report: path };
}

function timeOneRun(checkout: string, seed: string, extraArgs: readonly string[]): RunTiming {
  const started = performance.now();
  const run = spawnSync(
    'npm',
    ['run', '--silent', 'experiment', '--', '--json', '--seed', seed, ...extraArgs],
    {
      cwd: checkout,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  const wallMs = performance.now() - started;
  const failed = (problem: string): RunTiming => ({
    checkout,
    seed,
    wallMs,
    timeouts: 0,
    overruns: 0,
    problems: [problem],
  });
  if (run.error) return failed(`could not run npm: ${run.error.message}`);
  if (run.status !== 0) return failed(`exit ${run.status}: ${lastLine(run.stderr)}`);
  let report: ExperimentReport;
  try {
    report = JSON.parse(run.stdout) as ExperimentReport;
  } catch {
    return failed(`no JSON report on stdout: ${lastLine(run.stdout)}`);
  }
  const problems: string[] = [];
  let timeouts = 0;
  let overruns = 0;
  // The invocation that came closest to its own mode's function timeout (a charge mode's is longer).
  let closest: { slowestInvocationMs: number; functionTimeoutSeconds: number } | undefined;
  for (const [name, outcome] of Object.entries(report.modes)) {
    if (!outcome) continue;
    const mode = name as Mode;
    timeouts += outcome.runtime?.timeouts ?? 0;
    overruns += outcome.runtime?.visibilityOverruns ?? 0;
    const timeoutSeconds = report.environment.modes[mode]?.functionTimeoutSeconds;
    const slowestMs = outcome.runtime?.slowestInvocationMs;
    if (
      timeoutSeconds !== undefined &&
      slowestMs !== undefined &&
      (closest === undefined ||
        slowestMs / timeoutSeconds > closest.slowestInvocationMs / closest.functionTimeoutSeconds)
    ) {
      closest = { slowestInvocationMs: slowestMs, functionTimeoutSeconds: timeoutSeconds };
    }
    const broken = [...violations(mode, outcome)];
    if (broken.length > 0) problems.push(`${mode}: ${broken.join(', ')} impossible`);
    // With crashes, each mode's signature must show: a mode that stopped crashing would pass unseen.
    if (outcome.crashes > 0) {
      const signature = signatureOf(mode);
      if (!signature.holds(outcome)) problems.push(`${mode}: ${signature.expected}`);
    }
  }
  return {
    checkout,
    seed: report.config.seed,
    wallMs,
    phasesMs: report.phasesMs,
    ...(report.drainRounds ? { drainRoundsDoneAtMs: report.drainRounds.map((round) => round.doneAtMs) } : {}),
    ...closest,
    timeouts,
    overruns,
    problems,
  };
}

/**
 * What a crash must do to a mode in the default run, from its promises (contract/topology.ts): the
 * loss or the duplicate it does not promise against must show, and a mode that promises both must
 * be exact. So a mode that silently stopped crashing, or a guard that stopped guarding, fails here.
 */
function signatureOf(mode: Mode): { expected: string; holds: (outcome: ModeReport) => boolean } {
  const { noLoss, noDuplicates } = MODES[mode].promises;
  if (!noLoss) return { expected: 'crashed, yet lost nothing', holds: (outcome) => outcome.lost > 0 };
  if (!noDuplicates)
    return { expected: 'crashed, yet duplicated nothing', holds: (outcome) => outcome.duplicated > 0 };
  return {
    expected: 'not exact',
    holds: (outcome) => outcome.duplicated === 0 && outcome.lost === 0 && outcome.driftCents === 0,
  };
}

function label(checkout: string): string {
  return checkout === PROJECT_ROOT ? 'this checkout' : relative(PROJECT_ROOT, checkout) || checkout;
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

const median = (values: readonly number[]): number => spread(values).median;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** ` [rounds done at 4.7, 9.4, 13.8 s]`: when each delivery round of the drain was done. */
const rounds = (timing: RunTiming): string =>
  timing.drainRoundsDoneAtMs
    ? ` [rounds done at ${timing.drainRoundsDoneAtMs.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s]`
    : '';

runEntryPoint('bench:default-run', main);

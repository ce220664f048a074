/**
 * `npm run bench`: runs the experiment CLI as a user would (a fresh process each time, emulator
 * start included) and prints wall times, throughput and peak memory, with medians over repeats.
 *
 *   npm run bench                      default run ×3, then 10,000 messages per mode without crashes
 *   npm run bench -- --repeats 5       more repeats of the default run
 *   npm run bench -- --scale 2000      a smaller scale run
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../lib/bundling.js';
import type { ExperimentReport } from './experiment.js';

interface Measured {
  readonly wallMs: number;
  readonly report: ExperimentReport;
}

function runExperiment(args: string[]): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      join(PROJECT_ROOT, 'node_modules/.bin/tsx'),
      [join(PROJECT_ROOT, 'harness/cli.ts'), ...args, '--json'],
      {
        cwd: PROJECT_ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`experiment ${args.join(' ')} exited with ${code}`));
      resolve({ wallMs: performance.now() - started, report: JSON.parse(stdout) as ExperimentReport });
    });
  });
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

const mb = (kb: number | undefined) => (kb === undefined ? 'n/a' : `${(kb / 1024).toFixed(0)} MB`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { repeats: { type: 'string', default: '3' }, scale: { type: 'string', default: '10000' } },
  });
  const repeats = Number(values.repeats);
  const scale = Number(values.scale);
  if (!Number.isInteger(repeats) || repeats < 1 || !Number.isInteger(scale) || scale < 1) {
    process.stderr.write('usage: npm run bench -- [--repeats N] [--scale MESSAGES]\n');
    process.exit(2);
  }

  const defaults: Measured[] = [];
  for (let index = 0; index < repeats; index += 1) {
    process.stderr.write(`bench: default run ${index + 1}/${repeats}\n`);
    defaults.push(await runExperiment(['--seed', `bench-${index}`]));
  }
  process.stderr.write(`bench: ${scale} messages per mode, no crashes\n`);
  const big = await runExperiment([
    '--messages',
    String(scale),
    '--crash-rate',
    '0',
    '--seed',
    'bench-scale',
  ]);

  const lines = [
    `default run (200 messages × 3 modes, crash rate 0.02, batch 10), ${repeats} runs:`,
    `  wall time (process start to exit): median ${(median(defaults.map((m) => m.wallMs)) / 1000).toFixed(1)} s, ` +
      `runs ${defaults.map((m) => (m.wallMs / 1000).toFixed(1)).join(' / ')} s`,
    '',
    `scale run (${scale} messages per mode, no crashes): wall ${(big.wallMs / 1000).toFixed(1)} s`,
    ...Object.entries(big.report.modes).map(
      ([mode, outcome]) =>
        `  ${mode.padEnd(17)} ${String(outcome?.throughputPerSecond).padStart(7)} messages/s, ` +
        `applied once ${outcome?.appliedOnce}/${outcome?.produced}, drift ${outcome?.driftCents}`,
    ),
    `  peak RSS: experiment process ${mb(big.report.memory.experimentPeakRssKb)}, verifier ${mb(big.report.memory.verifierPeakRssKb)}`,
    `  phases: produce ${big.report.phasesMs.produce} ms, drain ${big.report.phasesMs.drain} ms, verify ${big.report.phasesMs.verify} ms`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

void main();

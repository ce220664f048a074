/**
 * Scale: effectively-once alone at N messages, each size in a fresh process (this file run as a
 * child: `tsx harness/studies/benchmarks/scale.ts --messages N`), so the experiment process's peak RSS is
 * that run's own. Reports wall time, throughput and the peak memory of every process: the
 * experiment (process.resourceUsage().maxRSS), the verifier (its environment's maxRSS) and DynamoDB
 * Local's JVM (VmHWM in /proc/<pid>/status, read at the end of the run).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODES } from '../../../contract/topology.js';
import { PROJECT_ROOT } from '../../../stack/bundling.js';
import { runEntryPoint } from '../../options/run.js';
import { newRunId, runExperiment } from '../../run/experiment.js';
import { benchConfig, startBenchEnvironment } from './environment.js';

export interface ScalePoint {
  readonly messages: number;
  /** Process start to the verifier's answer, emulator start included. */
  readonly wallSeconds: number;
  /** First send until the queue drained. */
  readonly runSeconds: number;
  readonly throughputPerSecond: number;
  readonly exact: boolean;
  readonly peakRssKb: {
    readonly experiment: number;
    readonly verifier: number | undefined;
    readonly dynamodbLocal: number | undefined;
  };
}

const MODE = 'effectively-once';

/** Peak resident set of a process (VmHWM), or undefined if it cannot be read (not Linux, gone). */
export function peakRssOfPid(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function child(messages: number): Promise<void> {
  const started = performance.now();
  const env = await startBenchEnvironment({
    modes: [MODE],
    batchSize: MODES[MODE].batchSize,
    concurrency: MODES[MODE].maxConcurrency,
    onStatus: (message) => process.stderr.write(`  scale ${messages}: ${message}\n`),
  });
  try {
    const seed = `bench-scale-${messages}`;
    const report = await runExperiment(env, benchConfig(MODE, messages, seed), newRunId(seed), {
      phase: (message) => process.stderr.write(`  scale ${messages}: ${message}\n`),
    });
    const outcome = report.modes[MODE];
    const point: ScalePoint = {
      messages,
      wallSeconds: Math.round(performance.now() - started) / 1000,
      runSeconds: Math.round(report.phasesMs.produce + report.phasesMs.drain) / 1000,
      throughputPerSecond: outcome?.throughputPerSecond ?? 0,
      exact:
        outcome !== undefined &&
        outcome.appliedOnce === messages &&
        outcome.duplicated === 0 &&
        outcome.lost === 0 &&
        outcome.driftCents === 0,
      peakRssKb: {
        experiment: process.resourceUsage().maxRSS,
        verifier: report.memory.verifierPeakRssKb,
        dynamodbLocal: env.local.dynamodbPid === undefined ? undefined : peakRssOfPid(env.local.dynamodbPid),
      },
    };
    process.stdout.write(`${JSON.stringify(point)}\n`);
  } finally {
    await env.stop();
  }
}

/** Runs one scale point in a fresh process. */
export function runScalePoint(messages: number): Promise<ScalePoint> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(
      join(PROJECT_ROOT, 'node_modules/.bin/tsx'),
      [fileURLToPath(import.meta.url), '--messages', String(messages)],
      { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    process_.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    process_.on('error', reject);
    process_.on('close', (code) => {
      if (code !== 0) return reject(new Error(`scale run of ${messages} messages exited with ${code}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ScalePoint);
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runEntryPoint('bench:scale', ({ values }) => child(values.messages).then(() => 0));
}

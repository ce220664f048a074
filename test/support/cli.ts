import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../stack/bundling.js';

const TSX = join(PROJECT_ROOT, 'node_modules/.bin/tsx');
const CLI = join(PROJECT_ROOT, 'harness/commands/run-experiment.ts');

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI directly, or (`viaNpm`) exactly as the README says: `npm run experiment -- …`. */
export function runCli(
  args: string[],
  onStart?: (child: ChildProcess) => void,
  env: NodeJS.ProcessEnv = process.env,
  viaNpm = false,
): Promise<Finished> {
  return viaNpm ? runNpmScript('experiment', args, onStart, env) : run(TSX, [CLI, ...args], onStart, env);
}

/** Runs a package script exactly as the README says: `npm run <script> -- …`. */
export function runNpmScript(
  script: string,
  args: string[],
  onStart?: (child: ChildProcess) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Finished> {
  return run('npm', ['run', script, '--', ...args], onStart, env);
}

function run(
  command: string,
  commandArgs: string[],
  onStart: ((child: ChildProcess) => void) | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    onStart?.(child);
  });
}

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/bundling.js';
import { MODE_NAMES } from '../../lib/topology.js';

const TSX = join(PROJECT_ROOT, 'node_modules/.bin/tsx');
const CLI = join(PROJECT_ROOT, 'harness/cli/run-experiment.ts');

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI directly, or (`viaNpm`) exactly as the README says: `npm run experiment -- …`. */
function runCli(
  args: string[],
  onStart?: (child: ChildProcess) => void,
  env: NodeJS.ProcessEnv = process.env,
  viaNpm = false,
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const [command, commandArgs] = viaNpm
      ? ['npm', ['run', 'experiment', '--', ...args]]
      : [TSX, [CLI, ...args]];
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

/** Processes whose command line mentions `pattern`, other than this test's own. */
function processesMatching(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', pattern], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.includes('pgrep'));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('npm run experiment (the CLI, as a child process)', () => {
  it('npm run experiment -- --json prints only the report, which matches reports/<runId>.json', async () => {
    const result = await runCli(
      ['--messages', '40', '--seed', 'cli-json', '--json'],
      undefined,
      process.env,
      true,
    );

    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(Object.keys(report)).toEqual(expect.arrayContaining(['runId', 'config', 'modes', 'durationMs']));
    expect(report.config).toMatchObject({
      messages: 40,
      accounts: 10,
      crashRate: 0.02,
      batchSize: 10,
      seed: 'cli-json',
    });
    for (const mode of MODE_NAMES) {
      expect(Object.keys(report.modes[mode])).toEqual(
        expect.arrayContaining([
          'produced',
          'deliveries',
          'appliedOnce',
          'duplicated',
          'extraApplications',
          'lost',
          'deadLettered',
          'expectedCents',
          'actualCents',
          'driftCents',
          'crashes',
          'consistent',
        ]),
      );
    }
    const saved = join(PROJECT_ROOT, 'reports', `${report.runId}.json`);
    expect(existsSync(saved)).toBe(true);
    expect(JSON.parse(readFileSync(saved, 'utf8'))).toEqual(report);
    // Progress goes to stderr, as plain lines when not on a terminal.
    expect(result.stderr).toContain('waiting until every queue is drained');
  });

  it('prints the table without --json, for the modes asked for', async () => {
    const result = await runCli([
      '--messages',
      '20',
      '--seed',
      'cli-table',
      '--crash-rate',
      '0',
      '--modes',
      'effectively-once,at-least-once',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/mode\s+produced\s+deliveries\s+applied once/);
    expect(result.stdout).toMatch(/\nat-least-once\s+20\s+20\s+20[^\n]*\neffectively-once\s+20\s+20\s+20/);
    expect(result.stdout).not.toContain('at-most-once');
    // Every run writes the page next to the JSON, and the summary says where.
    const page = /page: +(\S+\.html)/.exec(result.stdout)?.[1];
    expect(page).toBeDefined();
    const html = readFileSync(join(PROJECT_ROOT, page ?? ''), 'utf8');
    expect(html).toContain('<!doctype html>');
    expect(html).toContain('cli-table');
  });

  it('exits 2 with a clear message on an invalid option', async () => {
    const result = await runCli(['--crash-rate', 'lots']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--crash-rate must be a number from 0 to 1');
    expect(result.stdout).toBe('');
  });

  it('--help documents the options and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    for (const option of [
      '--messages',
      '--accounts',
      '--crash-rate',
      '--batch-size',
      '--seed',
      '--modes',
      '--concurrency',
      '--visibility-timeout',
      '--json',
      '--target',
    ]) {
      expect(result.stdout).toContain(option);
    }
  });

  it('--target aws without credentials exits with a clear message, and never reaches AWS', async () => {
    const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, ...rest } = process.env;
    const result = await runCli(['--target', 'aws', '--region', 'eu-west-1'], undefined, {
      ...rest,
      // No credentials anywhere, and no instance metadata lookup: the SDK fails before any request.
      AWS_CONFIG_FILE: '/nonexistent/config',
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials',
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('AWS credentials are missing, expired or not allowed');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('--target localstack with nothing listening says how to start LocalStack', async () => {
    const result = await runCli(['--target', 'localstack', '--endpoint', 'http://127.0.0.1:9']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('LocalStack is not reachable at http://127.0.0.1:9');
    expect(result.stderr).toContain('npm run localstack:up');
  });

  it('on SIGTERM mid-run stops the emulators and every function process', async () => {
    let pid: number | undefined;
    const result = await runCli(['--messages', '2000', '--seed', 'cli-term'], (child) => {
      pid = child.pid;
      let sent = false;
      child.stderr?.on('data', (chunk: Buffer) => {
        if (!sent && chunk.toString().includes('waiting until every queue is drained')) {
          sent = true;
          child.kill('SIGTERM');
        }
      });
    });
    expect(pid).toBeDefined();
    expect(result.code).toBe(143);
    expect(result.stderr).toContain('SIGTERM: stopping');
    expect(processesMatching('DynamoDBLocal')).toEqual([]);
    expect(processesMatching('delivery-semantics-bundles')).toEqual([]);
  });
});

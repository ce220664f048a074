/**
 * `kill -9` runs no exit hook: what the harness started must still go away, because the watchdog
 * (harness/local-aws/watchdog/watchdog.ts) sees the pipe from its parent close. Real processes, real SIGKILLs.
 * Linux only (reads /proc), like the machines the experiment runs on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { removeStaleBundleFolders } from '../../harness/local-aws/bundling/bundle.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { descendants, processInfo, survivors } from '../support/processes.js';

const TSX = join(PROJECT_ROOT, 'node_modules/.bin/tsx');
const CLI = join(PROJECT_ROOT, 'harness/commands/run-experiment.ts');
const WATCHDOG = join(PROJECT_ROOT, 'harness/local-aws/watchdog/watchdog.ts');
/** The requirement: everything gone within a few seconds of the SIGKILL. */
const CLEANUP_DEADLINE_MS = 5_000;

const scratch = mkdtempSync(join(tmpdir(), 'kill-cleanup-test-'));
const started: ChildProcess[] = [];
/** Made outside `scratch` (in the real temp dir), so removed one by one. */
const made: string[] = [];
afterAll(() => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const path of [scratch, ...made]) rmSync(path, { recursive: true, force: true });
});

async function waitFor(condition: () => boolean, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

/** Runs a TypeScript module in one node process (no tsx wrapper process), so its pid is the one to kill. */
function runScript(source: string): { child: ChildProcess; lines: AsyncIterator<string> } {
  const file = join(mkdtempSync(join(scratch, 'script-')), 'parent.ts');
  writeFileSync(file, source);
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push(child);
  const lines = (async function* () {
    let buffered = '';
    for await (const chunk of child.stdout ?? []) {
      buffered += String(chunk);
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        yield buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    }
  })();
  return { child, lines };
}

async function nextLine(lines: AsyncIterator<string>): Promise<string> {
  const next = await lines.next();
  if (next.done) throw new Error('the script exited before printing what the test waits for');
  return next.value;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('the watchdog', () => {
  it('after a SIGKILL of its parent, kills the registered processes and removes the registered folders', async () => {
    const dir = join(scratch, 'registered-folder');
    mkdirSync(dir);
    writeFileSync(join(dir, 'file'), 'x');
    const { child, lines } = runScript(`
      import { spawn } from 'node:child_process';
      import { registerWithWatchdog, watchdogPid } from ${JSON.stringify(pathToFileURL(WATCHDOG).href)};
      const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
      sleeper.once('exit', registerWithWatchdog({ pid: sleeper.pid! }));
      registerWithWatchdog({ dir: ${JSON.stringify(dir)} });
      console.log(JSON.stringify({ sleeper: sleeper.pid, watchdog: watchdogPid() }));
      setInterval(() => undefined, 1_000);
    `);
    const pids = JSON.parse(await nextLine(lines)) as { sleeper: number; watchdog: number };
    const recorded = [pids.sleeper, pids.watchdog].map((pid) => processInfo(pid));
    expect(recorded.every((info) => info !== undefined)).toBe(true);
    // No wait for the watchdog to read the registrations: they stay in the pipe after the writer dies.
    child.kill('SIGKILL');
    await exited(child);

    const clean = await waitFor(
      () => survivors(recorded.flatMap((info) => info ?? [])).length === 0 && !existsSync(dir),
      CLEANUP_DEADLINE_MS,
    );
    expect(survivors(recorded.flatMap((info) => info ?? []))).toEqual([]);
    expect(existsSync(dir)).toBe(false);
    expect(clean).toBe(true);
  });

  it('keeps no event loop alive, exits with its parent, and leaves unregistered resources alone', async () => {
    const dir = join(scratch, 'unregistered-folder');
    mkdirSync(dir);
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    started.push(sleeper);
    const { child, lines } = runScript(`
      import { registerWithWatchdog, watchdogPid } from ${JSON.stringify(pathToFileURL(WATCHDOG).href)};
      registerWithWatchdog({ pid: ${sleeper.pid} })();
      registerWithWatchdog({ dir: ${JSON.stringify(dir)} })();
      console.log(JSON.stringify({ watchdog: watchdogPid() }));
      // Nothing else to do: the process must now exit on its own.
    `);
    const { watchdog } = JSON.parse(await nextLine(lines)) as { watchdog: number };
    const recorded = processInfo(watchdog);
    const exitedInTime = await Promise.race([exited(child).then(() => true), sleep(5_000, false)]);
    expect(exitedInTime, 'the parent did not exit on its own: something keeps its event loop alive').toBe(
      true,
    );
    expect(child.exitCode).toBe(0);
    const watchdogGone = await waitFor(
      () => recorded === undefined || survivors([recorded]).length === 0,
      CLEANUP_DEADLINE_MS,
    );
    expect(watchdogGone).toBe(true);
    expect(sleeper.exitCode).toBeNull();
    expect(sleeper.signalCode).toBeNull();
    expect(existsSync(dir)).toBe(true);
  });
});

describe('npm run experiment, killed with SIGKILL mid-run', () => {
  it('leaves no DynamoDB Local, no function process, no watchdog and no bundle folder within a few seconds', async () => {
    // A stale folder of a run that is gone: the next start (this one) removes it.
    const deadPid = await pidOfAnExitedProcess();
    const stale = join(tmpdir(), `delivery-semantics-bundles-${deadPid}-Stale1`);
    mkdirSync(stale);
    made.push(stale);

    const cli = spawn(TSX, [CLI, '--messages', '300', '--seed', 'kill-test'], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(cli);
    let stderr = '';
    cli.stdout.resume();
    const draining = new Promise<boolean>((resolve) => {
      cli.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('waiting until every queue is drained')) resolve(true);
      });
      cli.once('exit', () => resolve(false));
    });
    expect(await draining, stderr).toBe(true);

    // tsx runs the CLI in a child node process: that one owns the emulator, bundles and functions.
    const cliPid = cli.pid ?? -1;
    const experiment = descendants(cliPid).find(
      (info) => info.ppid === cliPid && info.command.includes('harness/commands/run-experiment.ts'),
    );
    if (experiment === undefined) throw new Error(`no experiment process below tsx (pid ${cliPid})`);
    const tree = descendants(experiment.pid);
    const bundleFolders = readdirSync(tmpdir())
      .filter((name) => name.startsWith(`delivery-semantics-bundles-${experiment.pid}-`))
      .map((name) => join(tmpdir(), name));
    // What the run started, so the assertions below are about something that was there.
    expect(tree.some((info) => /java .*DynamoDBLocal/.test(info.command))).toBe(true);
    expect(tree.some((info) => info.command.includes('worker.mjs'))).toBe(true);
    expect(tree.some((info) => info.command.includes('watchdog-process.mjs'))).toBe(true);
    expect(bundleFolders).toHaveLength(1);
    expect(existsSync(stale)).toBe(false);

    process.kill(experiment.pid, 'SIGKILL');
    const killedAt = Date.now();
    const clean = await waitFor(
      () => survivors(tree).length === 0 && bundleFolders.every((folder) => !existsSync(folder)),
      CLEANUP_DEADLINE_MS,
    );
    const took = Date.now() - killedAt;

    expect(survivors(tree).map((info) => info.command)).toEqual([]);
    expect(bundleFolders.filter((folder) => existsSync(folder))).toEqual([]);
    expect(clean, `cleanup took ${took} ms`).toBe(true);
    await exited(cli);
  });

  it('a start removes bundle folders whose owner is gone and keeps those of live owners', async () => {
    const deadPid = await pidOfAnExitedProcess();
    const folders = mkdtempSync(join(scratch, 'tmp-'));
    const dead = join(folders, `delivery-semantics-bundles-${deadPid}-AbC123`);
    const live = join(folders, `delivery-semantics-bundles-${process.pid}-AbC123`);
    const unrelated = join(folders, 'delivery-semantics-bundles-not-ours');
    for (const folder of [dead, live, unrelated]) mkdirSync(folder);
    writeFileSync(join(dead, 'worker.mjs'), '');

    expect(await removeStaleBundleFolders(folders)).toEqual([dead]);
    expect([dead, live, unrelated].map((folder) => existsSync(folder))).toEqual([false, true, true]);
  });
});

/** A pid that no process has right now: one of a process that has just exited (and been reaped). */
async function pidOfAnExitedProcess(): Promise<number> {
  const child = spawn('true', { stdio: 'ignore' });
  await exited(child);
  const pid = child.pid;
  if (pid === undefined || processInfo(pid) !== undefined) throw new Error('could not find a free pid');
  return pid;
}

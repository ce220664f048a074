import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODES } from '../../contract/topology.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { runCli } from '../support/cli.js';
import { descendants, type ProcessInfo, survivors } from '../support/processes.js';

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
    for (const mode of DEFAULT_MODES) {
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

  it('on SIGTERM mid-run stops the emulators and every function process', async () => {
    // What the CLI had started when it was signalled: its process tree, not every process on the
    // machine whose name matches (other files' runs may be running beside this one).
    let tree: ProcessInfo[] = [];
    const result = await runCli(['--messages', '2000', '--seed', 'cli-term'], (child) => {
      let sent = false;
      child.stderr?.on('data', (chunk: Buffer) => {
        if (!sent && chunk.toString().includes('waiting until every queue is drained')) {
          sent = true;
          // To the CLI's own process, under tsx: tsx relays a signal it gets itself only if the
          // child acknowledges it within 30 ms, else it SIGKILLs the child (tsx's relaySignals),
          // which a loaded machine's busy child misses: that tests tsx, not the CLI's cleanup.
          const cli = descendants(child.pid ?? -1).find((info) =>
            info.command.includes('harness/commands/run-experiment.ts'),
          );
          if (cli === undefined) throw new Error(`no experiment process below pid ${child.pid}`);
          tree = [cli, ...descendants(cli.pid)];
          process.kill(cli.pid, 'SIGTERM');
        }
      });
    });
    expect(result.code).toBe(143);
    expect(result.stderr).toContain('SIGTERM: stopping');
    // What it had started, so the assertion below is about something that was there.
    expect(tree.some((info) => /java .*DynamoDBLocal/.test(info.command))).toBe(true);
    expect(tree.some((info) => info.command.includes('delivery-semantics-bundles'))).toBe(true);
    expect(survivors(tree).map((info) => info.command)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { helpText } from '../../harness/options/help.js';
import { runCli, runNpmScript } from '../support/cli.js';

/**
 * The CLI's answers that come before any run: option errors, --help, and targets it cannot reach.
 * No emulator starts, so these run beside other files; the runs themselves are in cli.test.ts.
 */
describe('npm run experiment (the CLI, as a child process): options and unreachable targets', () => {
  it('exits 2 with a clear message on an invalid option', async () => {
    const result = await runCli(['--crash-rate', 'lots']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--crash-rate must be a number from 0 to 1, got "lots"');
    expect(result.stderr).toContain('Run `npm run experiment -- --help` for the options.');
    expect(result.stdout).toBe('');
  });

  it('--help documents the options and exits 0', async () => {
    // Through npm, as the README says: the one --help run that goes through `npm run` and its `--`.
    const result = await runCli(['--help'], undefined, process.env, true);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(helpText('experiment'));
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
});

describe('npm run redrive (a finished deployed run): what it refuses before it reaches a stack', () => {
  it('needs --run', async () => {
    const result = await runNpmScript('redrive', []);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: npm run redrive needs --run RUN: the run to redrive');
  });

  it('refuses an embedded run, saying to redrive within the run instead', async () => {
    const result = await runNpmScript('redrive', ['--run', 'r-1', '--target', 'embedded']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'error: an embedded run cannot be redriven after it ended: its queues, DLQs and ledger lived in ' +
        'emulators that stopped with it. Redrive within the run instead: `npm run experiment -- --redrive`',
    );
    expect(result.stdout).toBe('');
  });

  it('--target localstack with nothing listening says how to start LocalStack', async () => {
    const result = await runNpmScript('redrive', [
      '--run',
      'r-1',
      '--target',
      'localstack',
      '--endpoint',
      'http://127.0.0.1:9',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('LocalStack is not reachable at http://127.0.0.1:9');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});

/**
 * Every `npm run` entry point answers an invalid option before it starts anything: the message
 * and a hint naming its own script on stderr, and exit 2. That run shows the script reaches its
 * entry point and that entry point's own declaration; what `--help` does there is the one wrapper's
 * (options/run.test.ts), and each help text is checked in-process (options/docs.test.ts), so a
 * child process per script for its help (eight of them, 1.5 CPU-seconds each) would show nothing
 * more than the experiment's above.
 */
describe.concurrent.each([
  ['experiment', ['--messages', '0'], '--messages must be a whole number from 1 to 1,000,000, got "0"'],
  ['sweep', ['--batch-sizes', '1,x'], '--batch-sizes must be a comma-separated list of whole numbers'],
  ['bench', ['--scale', 'lots'], '--scale must be a comma-separated list of whole numbers from 0'],
  ['bench:verifier', ['--events', '0'], '--events must be a whole number from 1 to 10,000,000, got "0"'],
  ['bench:default-run', ['--', '--crash-rate', '2'], 'after --, for the experiment: --crash-rate must be'],
  ['proofs', ['--crash-at', 'nowhere'], '--crash-at must be EVENT@RECEIVE, like evt-000000@1, got "nowhere"'],
  ['redrive', ['--run', 'a run'], '--run must be a run id (1–128 of A-Z a-z 0-9 . _ : -)'],
  ['docs:options', ['--nope'], "Unknown option '--nope'"],
  ['docs:figures', ['--record', 'nope', '--from', 'x.json'], "--record: no figure 'nope'"],
] as const)('npm run %s', (script, bad, message) => {
  it(`exits 2 on ${bad.join(' ')}, saying what is wrong and where the options are`, async () => {
    const result = await runNpmScript(script, [...bad]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: ${message}`);
    expect(result.stderr).toContain(`Run \`npm run ${script} -- --help\` for the options.`);
  });
});

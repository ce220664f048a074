import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/**
 * The CLI's answers that come before any run: option errors, --help, and targets it cannot reach.
 * No emulator starts, so these run beside other files; the runs themselves are in cli.test.ts.
 */
describe('npm run experiment (the CLI, as a child process): options and unreachable targets', () => {
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
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helpText } from '../../../../harness/options/help.js';
import type { ParsedOptions } from '../../../../harness/options/parse.js';
import {
  describeFailure,
  type Outcome,
  reportPathLines,
  runToExitCode,
} from '../../../../harness/options/run.js';
import { UsageError } from '../../../../harness/options/usage-error.js';

class StackMissingError extends Error {
  override readonly name = 'StackMissingError';
}

/** Runs `main` as the sweep's entry point would, and keeps what it printed. */
async function run(argv: string[], main: (options: ParsedOptions<'sweep'>) => Outcome | Promise<Outcome>) {
  let stdout = '';
  let stderr = '';
  const code = await runToExitCode(
    'sweep',
    argv,
    main,
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    },
    { explained: [StackMissingError] },
  );
  return { code, stdout, stderr };
}

describe('the entry point wrapper', () => {
  it('prints the help on stdout and exits 0, without running', async () => {
    let ran = false;
    const result = await run(['--messages', 'many', '--help'], () => {
      ran = true;
      return 0;
    });
    expect(result).toEqual({ code: 0, stdout: `${helpText('sweep')}\n`, stderr: '' });
    expect(ran).toBe(false);
  });

  it('exits 2 on an invalid option, with the message and a hint, without running', async () => {
    const result = await run(['--repeats', '0'], () => 0);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: --repeats must be a whole number from 1 to 100, got "0"\n' +
        'Run `npm run sweep -- --help` for the options.\n',
    });
  });

  it('exits 2 on a usage error the run itself finds', async () => {
    const result = await run([], () => {
      throw new UsageError('the stack was deployed with another batch size');
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: the stack was deployed with another batch size\nRun `npm run sweep/,
    );
  });

  it('exits 1 on a failure and prints the error', async () => {
    expect(await run([], () => Promise.reject(new Error('DynamoDB Local did not start')))).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: DynamoDB Local did not start\n',
    });
    class DrainTimeoutError extends Error {
      override readonly name = 'DrainTimeoutError';
    }
    expect((await run([], () => Promise.reject(new DrainTimeoutError('stalled')))).stderr).toBe(
      'error: DrainTimeoutError: stalled\n',
    );
    expect((await run([], () => Promise.reject(new StackMissingError('deploy it first')))).stderr).toBe(
      'error: deploy it first\n',
    );
  });

  it('answers the run’s exit code, and prints the reports it wrote last', async () => {
    const report = join(process.cwd(), 'reports', 'sweep-x.json');
    const page = join(process.cwd(), 'reports', 'sweep-x.html');
    expect(await run([], () => 3)).toMatchObject({ code: 3, stdout: '' });
    expect(await run([], () => undefined)).toMatchObject({ code: 0 });
    expect(await run([], () => ({ exitCode: 1, report, page }))).toEqual({
      code: 1,
      stdout: 'report: reports/sweep-x.json\npage:   reports/sweep-x.html (open it in a browser)\n',
      stderr: '',
    });
  });

  it('hands the parsed options to the run', async () => {
    let seen: ParsedOptions<'sweep'> | undefined;
    await run(['--quick', '--repeats', '3'], (options) => {
      seen = options;
      return 0;
    });
    expect(seen?.values).toMatchObject({ quick: true, repeats: 3, messages: 60 });
  });
});

describe('a failure, described', () => {
  it('keeps the stack of a programming error', () => {
    const text = describeFailure(new TypeError('x is undefined'));
    expect(text).toMatch(/^error: TypeError: x is undefined\n\s+at /);
  });

  it('says what was thrown when it is not an Error', () => {
    expect(describeFailure('boom')).toBe('error: boom');
  });
});

describe('report paths', () => {
  it('are relative to the working directory', () => {
    expect(reportPathLines({ report: join(process.cwd(), 'reports/a.json') })).toEqual([
      'report: reports/a.json',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_MODES, MODE_NAMES } from '../../../../contract/topology.js';
import { parseOptions, wantsHelp } from '../../../../harness/options/parse.js';
import { UsageError } from '../../../../harness/options/usage-error.js';

describe('the option parser', () => {
  it('gives each entry point its own defaults, and the --quick ones under --quick', () => {
    expect(parseOptions('sweep', []).values).toEqual({
      messages: 200,
      'batch-sizes': [1, 10, 50, 100],
      'crash-rates': [0.02, 0.05],
      repeats: 2,
      quick: false,
      help: false,
    });
    expect(parseOptions('sweep', ['--quick']).values).toMatchObject({
      messages: 60,
      'batch-sizes': [1, 10],
      'crash-rates': [0.02],
      repeats: 1,
    });
    expect(parseOptions('bench', ['--quick', '--messages', '50']).values).toMatchObject({
      messages: 50, // given beats --quick
      repetitions: 1,
      scale: [],
      // The default run's modes and the one-write modes, whose production shapes the bench prices.
      modes: [...DEFAULT_MODES, 'entry-upsert', 'state-upsert', 'fifo-versioned'],
    });
    expect(parseOptions('bench', []).values).toMatchObject({ messages: 600, scale: [1000, 10_000, 100_000] });
    expect(parseOptions('bench:scale', []).values.messages).toBe(1000);
    expect(parseOptions('bench:verifier', []).values.events).toBe(100_000);
    expect(parseOptions('bench:default-run', []).values).toEqual({
      runs: 10,
      compare: undefined,
      help: false,
    });
    expect(parseOptions('proofs', []).values).toEqual({
      modes: MODE_NAMES,
      'crash-at': 'evt-000000@1',
      help: false,
    });
  });

  it('gives npm run redrive a deployed target and the run’s modes by default, and needs --run', () => {
    expect(parseOptions('redrive', ['--run', '20261130T150406Z-r1-ea4x']).values).toEqual({
      target: 'aws',
      stack: 'DeliverySemantics',
      region: undefined,
      endpoint: undefined,
      run: '20261130T150406Z-r1-ea4x',
      modes: undefined,
      json: false,
      help: false,
    });
    expect(() => parseOptions('redrive', ['--target', 'localstack'])).toThrow(
      new UsageError(
        'npm run redrive needs --run RUN: the run to redrive, as `npm run experiment` named it (reports/<runId>.json)',
      ),
    );
    expect(() => parseOptions('redrive', ['--run', 'a/b'])).toThrow(
      '--run must be a run id (1–128 of A-Z a-z 0-9 . _ : -), like 20261130T150406Z-r1-ea4x, got "a/b"',
    );
    expect(() => parseOptions('redrive', ['--run', 'r', '--target', 'embedded', '--stack', 'S'])).toThrow(
      '--stack applies to --target aws or localstack, not embedded',
    );
  });

  it('reads lists, and modes in topology order whatever order they were given in', () => {
    expect(parseOptions('sweep', ['--batch-sizes', '5, 20', '--crash-rates=0,1']).values).toMatchObject({
      'batch-sizes': [5, 20],
      'crash-rates': [0, 1],
    });
    expect(parseOptions('proofs', ['--modes', 'effectively-once,at-most-once']).values.modes).toEqual([
      'at-most-once',
      'effectively-once',
    ]);
  });

  it('remembers which options were given', () => {
    expect([...parseOptions('bench', ['--quick', '--scale', '0']).explicit].sort()).toEqual([
      'quick',
      'scale',
    ]);
  });

  it.each([
    [
      'sweep',
      ['--batch-sizes', '1,0'],
      '--batch-sizes must be a comma-separated list of whole numbers from 1 to 10,000, got "1,0"',
    ],
    ['sweep', ['--batch-sizes', '1,,2'], '--batch-sizes must be a comma-separated list'],
    [
      'sweep',
      ['--crash-rates', '0.1,2'],
      '--crash-rates must be a comma-separated list of numbers from 0 to 1, got "0.1,2"',
    ],
    ['sweep', ['--repeats', '0'], '--repeats must be a whole number from 1 to 100, got "0"'],
    ['bench', ['--repetitions', 'x'], '--repetitions must be a whole number from 1 to 100, got "x"'],
    [
      'bench',
      ['--scale', '1000,1e3'],
      '--scale must be a comma-separated list of whole numbers from 0 to 1,000,000',
    ],
    ['bench', ['--modes', 'at-least-once,exactly-once'], 'unknown: "exactly-once"'],
    ['bench:verifier', ['--events', '-5'], '--events must be a whole number from 1 to 10,000,000, got "-5"'],
    ['bench:verifier', ['--events=-5'], '--events must be a whole number from 1 to 10,000,000, got "-5"'],
    ['bench:verifier', ['--events', '0'], '--events must be a whole number from 1 to 10,000,000, got "0"'],
    ['bench:default-run', ['--runs', '1.5'], '--runs must be a whole number from 1 to 1,000, got "1.5"'],
    ['proofs', ['--crash-at', 'evt-1'], '--crash-at must be EVENT@RECEIVE, like evt-000000@1, got "evt-1"'],
    ['proofs', ['--modes', ''], '--modes must be a comma-separated list of at-most-once'],
    ['bench:scale', ['--messages', '0'], '--messages must be a whole number from 1 to 1,000,000, got "0"'],
  ] as const)(
    '%s refuses %j, naming the option, the value and what is allowed',
    (entryPoint, argv, message) => {
      expect(() => parseOptions(entryPoint, argv)).toThrow(UsageError);
      expect(() => parseOptions(entryPoint, argv)).toThrow(message);
    },
  );

  it('says when an option belongs to another command', () => {
    expect(() => parseOptions('bench', ['--crash-rate', '0.1'])).toThrow(
      "Unknown option '--crash-rate': it is an option of npm run experiment, not of npm run bench",
    );
    expect(() => parseOptions('sweep', ['--nope'])).toThrow(/^Unknown option '--nope'$/);
  });

  it('names the nearest known option for a typo, and none for a word far from every option', () => {
    expect(() => parseOptions('experiment', ['--mesages', '5'])).toThrow(
      /^Unknown option '--mesages': did you mean --messages\?$/,
    );
    expect(() => parseOptions('experiment', ['--crahs-rate', '0.1'])).toThrow(/did you mean --crash-rate\?$/);
    expect(() => parseOptions('experiment', ['--banana'])).toThrow(/^Unknown option '--banana'$/);
  });

  it('gives a negative number the same message in both spellings', () => {
    const message = '--messages must be a whole number from 1 to 1,000,000, got "-5"';
    expect(() => parseOptions('experiment', ['--messages', '-5'])).toThrow(message);
    expect(() => parseOptions('experiment', ['--messages=-5'])).toThrow(message);
  });

  it('refuses an option the chosen target cannot honour, saying why', () => {
    expect(() => parseOptions('experiment', ['--target', 'aws', '--kill-rate', '0.1'])).toThrow(
      /^--kill-rate is injected by the local Lambda runtime, so it applies to --target embedded only; on aws/,
    );
    expect(() => parseOptions('experiment', ['--region', 'eu-west-1'])).toThrow(
      '--region applies to --target aws or localstack, not embedded',
    );
    expect(() => parseOptions('experiment', ['--endpoint', 'http://localhost:4566'])).toThrow(
      '--endpoint applies to --target localstack, not embedded',
    );
    expect(() =>
      parseOptions('experiment', ['--target', 'localstack', '--region', 'eu-west-1']),
    ).not.toThrow();
  });

  it('refuses an option without the one it needs', () => {
    expect(() => parseOptions('experiment', ['--work-delay-rate', '0.5'])).toThrow(
      '--work-delay-rate needs --work-delay MS (how much slower a slow invocation is)',
    );
    expect(() => parseOptions('experiment', ['--work-delay-rate', '0.5', '--work-delay', '0'])).toThrow(
      /needs --work-delay/,
    );
    expect(
      parseOptions('experiment', ['--work-delay-rate', '0.5', '--work-delay', '10']).values,
    ).toMatchObject({
      'work-delay-rate': 0.5,
      'work-delay': 10,
    });
  });

  it('passes what follows a lone -- on, only where the entry point does, and refuses stray arguments', () => {
    expect(parseOptions('bench:default-run', ['--runs', '2', '--', '--seed', 'd3']).passThrough).toEqual([
      '--seed',
      'd3',
    ]);
    expect(() => parseOptions('bench:default-run', ['extra'])).toThrow('unexpected argument "extra"');
    expect(() => parseOptions('sweep', ['--', '--seed', 'd3'])).toThrow(
      'npm run sweep -- takes no arguments after a lone --',
    );
  });

  it('sees a request for help before a lone --, however wrong the rest is', () => {
    expect(wantsHelp(['--messages', '0', '-h'])).toBe(true);
    expect(wantsHelp(['--help'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
    expect(wantsHelp(['--helpful'])).toBe(false);
  });
});

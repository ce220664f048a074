import { describe, expect, it } from 'vitest';
import { DEFAULT_MODES, MODE_NAMES } from '../../../../contract/topology.js';
import { parseCliArgs } from '../../../../harness/commands/cli-args.js';
import { NO_FAULTS } from '../../../../harness/local-aws/faults/faults.js';
import { DEFAULTS } from '../../../../harness/options/declaration.js';
import { UsageError } from '../../../../harness/options/usage-error.js';
import { replayCommand } from '../../../../harness/run/replay-command.js';

describe('experiment command-line options', () => {
  it('has the documented defaults', () => {
    const { config, json, target, coldStarts } = parseCliArgs([]);
    expect(target).toBe('embedded');
    expect(json).toBe(false);
    expect(coldStarts).toBe(false);
    expect(config).toMatchObject({
      messages: 200,
      accounts: 10,
      crashRate: 0.02,
      batchSize: undefined,
      modes: DEFAULT_MODES,
      visibilityTimeoutSeconds: DEFAULTS.visibilityTimeoutSeconds,
    });
    expect(config.seed).toMatch(/^[a-z0-9]+$/);
  });

  it('sizes the local visibility timeout for the batch size and concurrency unless one is given', () => {
    const visibility = (...argv: string[]) => parseCliArgs(argv).config.visibilityTimeoutSeconds;
    // A 2 s function timeout (twice the slowest invocation of a default run) and the receive's 1 s.
    expect(visibility()).toBe(3);
    expect(visibility('--batch-size', '1')).toBe(3);
    // Five batches of 10 in flight per mode take seconds on DynamoDB Local: 6 s (function timeout 5 s).
    expect(visibility('--concurrency', '5')).toBe(6);
    // Above 10 records the batching window's second is added too.
    expect(visibility('--batch-size', '100')).toBe(22);
    // Every mode's batches queue at the one DynamoDB Local: a redrive's 12 modes get 7 s (timeout 6 s).
    expect(visibility('--redrive')).toBe(7);
    expect(visibility('--modes', 'effectively-once')).toBe(3);
    // Without prewarm the 8 first batches wait for their inits, all at once: ⌈8 / 3⌉ s more.
    expect(visibility('--cold-starts')).toBe(6);
    expect(visibility('--concurrency', '5', '--visibility-timeout', '4')).toBe(4);
  });

  it('redrives only when asked, right after the first drain unless --redrive-after says when', () => {
    expect(parseCliArgs([]).config.redrive).toBeUndefined();
    expect(parseCliArgs(['--redrive']).config.redrive).toEqual({ afterSeconds: 0 });
    expect(parseCliArgs(['--redrive', '--redrive-after', '30']).config.redrive).toEqual({ afterSeconds: 30 });
    expect(parseCliArgs(['--redrive', '--target', 'aws']).config.redrive).toEqual({ afterSeconds: 0 });
    // Where the key matters, every mode runs unless --modes says otherwise.
    expect(parseCliArgs(['--redrive']).config.modes).toEqual(MODE_NAMES);
    expect(parseCliArgs([]).config.modes).toEqual(DEFAULT_MODES);
    expect(parseCliArgs(['--redrive', '--modes', 'effectively-once']).config.modes).toEqual([
      'effectively-once',
    ]);
    expect(() => parseCliArgs(['--redrive-after', '30'])).toThrow(
      new UsageError('--redrive-after needs --redrive (it says when the redrive starts)'),
    );
    expect(() => parseCliArgs(['--redrive', '--redrive-after', '86401'])).toThrow(
      /--redrive-after must be a whole number from 0 to 86,400, got "86401"/,
    );
    const replay = replayCommand(parseCliArgs(['--redrive', '--redrive-after', '5', '--seed', 's']).config);
    expect(replay).toContain('--redrive --redrive-after 5');
    expect(parseCliArgs(argsOf(replay)).config.redrive).toEqual({ afterSeconds: 5 });
  });

  it('starts environments on demand with --cold-starts', () => {
    expect(parseCliArgs(['--cold-starts']).coldStarts).toBe(true);
  });

  it('reads every option', () => {
    const { config, json } = parseCliArgs([
      '--messages=50',
      '--accounts',
      '3',
      '--crash-rate',
      '0.5',
      '--batch-size',
      '25',
      '--seed',
      'demo',
      '--modes',
      'effectively-once,at-most-once',
      '--concurrency',
      '4',
      '--visibility-timeout',
      '7',
      '--max-receive-count',
      '3',
      '--poison-rate',
      '0.1',
      '--producer-duplicate-rate',
      '0.2',
      '--redelivery-rate',
      '0.3',
      '--throttle-rate',
      '0.05',
      '--work-delay',
      '12000',
      '--work-delay-rate',
      '0.5',
      '--kill-rate',
      '0.01',
      '--json',
    ]);
    expect(json).toBe(true);
    expect(config).toEqual({
      messages: 50,
      accounts: 3,
      crashRate: 0.5,
      batchSize: 25,
      seed: 'demo',
      modes: ['at-most-once', 'effectively-once'],
      concurrency: 4,
      visibilityTimeoutSeconds: 7,
      maxReceiveCount: 3,
      faults: {
        poisonRate: 0.1,
        producerDuplicateRate: 0.2,
        redeliveryRate: 0.3,
        throttleRate: 0.05,
        workDelayMs: 12000,
        workDelayRate: 0.5,
        killRate: 0.01,
      },
      ageGuard: true,
    });
  });

  it('reads marker retention, the age guard and the outage window', () => {
    const { config } = parseCliArgs([
      '--marker-ttl',
      '30',
      '--no-age-guard',
      '--outage-after',
      '2',
      '--outage-for',
      '30',
    ]);
    expect(config).toMatchObject({ markerTtlSeconds: 30, ageGuard: false });
    expect(config.faults.outage).toEqual({ afterSeconds: 2, forSeconds: 30 });
    expect(parseCliArgs([]).config).not.toHaveProperty('markerTtlSeconds');
    expect(parseCliArgs([]).config.faults.outage).toBeUndefined();
    expect(() => parseCliArgs(['--outage-after', '2'])).toThrow(/--outage-for/);
    expect(() => parseCliArgs(['--marker-ttl', '30', '--target', 'aws'])).toThrow(/--marker-ttl/);
  });

  it('injects no faults by default, and slows a share of invocations when only --work-delay is given', () => {
    expect(parseCliArgs([]).config.faults).toEqual(NO_FAULTS);
    expect(parseCliArgs(['--work-delay', '500']).config.faults).toMatchObject({
      workDelayMs: 500,
      workDelayRate: DEFAULTS.workDelayRate,
    });
  });

  it.each([
    [['--poison-rate', '1.5'], /--poison-rate must be a number from 0 to 1/],
    [['--kill-rate', ''], /--kill-rate must be a number from 0 to 1/],
    [['--work-delay-rate', '0.5'], /--work-delay-rate needs --work-delay/],
    [['--work-delay', '1.5'], /--work-delay must be a whole number/],
    [
      ['--target', 'aws', '--redelivery-rate', '0.1'],
      /--redelivery-rate is injected by the local Lambda runtime/,
    ],
    [['--target', 'localstack', '--kill-rate', '0.1'], /applies to --target embedded only/],
    [
      ['--target', 'aws', '--max-receive-count', '3'],
      /--max-receive-count applies to --target embedded only/,
    ],
    [
      ['--target', 'aws', '--producer', 'outbox'],
      /--producer runs on --target embedded only: on aws the stack/,
    ],
    [['--producer', 'kafka'], /--producer must be one of direct, outbox, dual-write/],
    [
      ['--target', 'aws', '--provider-lost-response-rate', '0.1'],
      /deploy with `npx cdk deploy -c providerLostResponseRate=R`/,
    ],
    [['--producer-crash-rate', '2'], /--producer-crash-rate must be a number from 0 to 1/],
    [['--relay-crash-rate', '0.1'], /--relay-crash-rate needs --producer outbox/],
    [['--producer', 'dual-write', '--relay-crash-rate', '0.1'], /--relay-crash-rate needs --producer outbox/],
    [['--producer', 'outbox', '--relay-crash-rate', '1'], /--relay-crash-rate must be below 1/],
    [['--producer-crash-rate', '0.1'], /--producer-crash-rate needs --producer dual-write or outbox/],
    [
      ['--provider-lost-response-rate', '0.1', '--modes', 'effectively-once'],
      /--provider-lost-response-rate applies to the charge modes/,
    ],
  ])('refuses %j with a message that says why', (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(message);
  });

  it('reads the producer and the side-effect faults', () => {
    const { config } = parseCliArgs([
      '--modes',
      'charge-with-key',
      '--producer',
      'outbox',
      '--relay-crash-rate',
      '0.05',
      '--producer-crash-rate',
      '0.1',
      '--provider-lost-response-rate',
      '0.2',
    ]);
    expect(config.producer).toBe('outbox');
    expect(config.faults).toMatchObject({
      relayCrashRate: 0.05,
      producerCrashRate: 0.1,
      providerLostResponseRate: 0.2,
    });
    expect(parseCliArgs([]).config.producer).toBeUndefined();
  });

  it('lets the producer-side faults run on a deployed target', () => {
    const { config } = parseCliArgs([
      '--target',
      'aws',
      '--poison-rate',
      '0.1',
      '--producer-duplicate-rate',
      '0.1',
    ]);
    expect(config.faults).toMatchObject({ poisonRate: 0.1, producerDuplicateRate: 0.1 });
  });

  it('reads the deployed-target options and remembers which flags were given', () => {
    const options = parseCliArgs([
      '--target',
      'localstack',
      '--stack',
      'Demo',
      '--endpoint',
      'http://127.0.0.1:4566',
      '--crash-rate',
      '0',
    ]);
    expect(options).toMatchObject({
      target: 'localstack',
      stackName: 'Demo',
      endpoint: 'http://127.0.0.1:4566',
    });
    expect([...options.explicit].sort()).toEqual(['crash-rate', 'endpoint', 'stack', 'target']);
    expect(parseCliArgs(['--target', 'aws']).stackName).toBe('DeliverySemantics');
  });

  it.each([
    [['--messages', '0'], /--messages must be a whole number from 1/],
    [['--messages', '1.5'], /--messages/],
    [['--crash-rate', '2'], /--crash-rate must be a number from 0 to 1/],
    [['--crash-rate', ''], /--crash-rate/],
    [['--batch-size', '10001'], /--batch-size/],
    [['--modes', 'exactly-once'], /unknown: "exactly-once"/],
    [['--concurrency', '1'], /--concurrency must be a whole number from 2/],
    [['--seed', 'has space'], /--seed/],
    [['--target', 'mars'], /--target must be one of/],
    [['--nope'], /Unknown option '--nope'/],
    [['--stack', 'X'], /--stack applies to --target aws or localstack/],
    [['--target', 'aws', '--concurrency', '3'], /--concurrency applies to --target embedded only/],
    [
      ['--target', 'aws', '--visibility-timeout', '3'],
      /--visibility-timeout applies to --target embedded only/,
    ],
    [['--target', 'aws', '--cold-starts'], /--cold-starts applies to --target embedded only/],
    [['--target', 'aws', '--endpoint', 'http://localhost:4566'], /--endpoint applies to --target localstack/],
    [['--target', 'localstack', '--endpoint', 'localhost'], /--endpoint must be a URL/],
  ])('refuses %o with a clear message', (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(UsageError);
    expect(() => parseCliArgs(argv)).toThrow(message);
  });
});

const argsOf = (command: string) => command.replace(/^npm run experiment -- /, '').split(' ');

describe('the replay command of a run', () => {
  it('parses back to the same configuration', () => {
    const { config } = parseCliArgs([
      '--seed',
      's1',
      '--messages',
      '50',
      '--batch-size',
      '5',
      '--modes',
      'at-least-once,effectively-once',
      '--poison-rate',
      '0.1',
      '--throttle-rate',
      '0.2',
      '--work-delay',
      '500',
      '--kill-rate',
      '0.05',
      '--max-receive-count',
      '3',
      '--outage-after',
      '2',
      '--outage-for',
      '30',
    ]);
    expect(config.faults.outage).toEqual({ afterSeconds: 2, forSeconds: 30 });
    expect(parseCliArgs(argsOf(replayCommand(config))).config).toEqual(config);
  });

  it('is accepted on a deployed target, without the local runtime’s flags', () => {
    const { config } = parseCliArgs(['--seed', 's2', '--poison-rate', '0.1', '--kill-rate', '0.1']);
    expect(() => parseCliArgs(argsOf(replayCommand(config, 'aws')))).not.toThrow();
  });
});

describe('the one-write modes’ balance items', () => {
  it('refuses more messages per account than a 400 KB balance item can carry, naming what to change', () => {
    expect(() => parseCliArgs(['--messages', '20000', '--accounts', '2'])).toThrow(
      /10000 messages per account: at-most-once and at-least-once .* Raise --accounts to at least 4/,
    );
    // The same run without them, or over enough accounts, is fine.
    expect(() =>
      parseCliArgs(['--messages', '20000', '--accounts', '2', '--modes', 'effectively-once']),
    ).not.toThrow();
    expect(() => parseCliArgs(['--messages', '20000', '--accounts', '4'])).not.toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../../../harness/cli/cli-args.js';
import { replayCommand } from '../../../../harness/experiment/replay-command.js';

const argsOf = (command: string) => command.replace(/^npm run experiment -- /, '').split(' ');

describe('the replay command', () => {
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
    ]);
    expect(parseCliArgs(argsOf(replayCommand(config))).config).toEqual(config);
  });

  it('leaves the local runtime’s flags out on a deployed target, so the command is accepted there', () => {
    const { config } = parseCliArgs(['--seed', 's2', '--poison-rate', '0.1', '--kill-rate', '0.1']);
    const command = replayCommand(config, 'aws');
    expect(command).toMatch(/--target aws/);
    expect(command).toMatch(/--poison-rate 0.1/);
    expect(command).not.toMatch(/--kill-rate|--visibility-timeout/);
    expect(() => parseCliArgs(argsOf(command))).not.toThrow();
  });
});

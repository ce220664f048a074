import { describe, expect, it } from 'vitest';
import { MODE_NAMES } from '../../../../contract/topology.js';
import { NO_FAULTS } from '../../../../harness/local-aws/faults/faults.js';
import type { ExperimentConfig } from '../../../../harness/run/experiment.js';
import { replayCommand } from '../../../../harness/run/replay-command.js';

// That the command parses back to the same configuration is checked with the CLI's parser, in
// test/unit/harness/commands/cli-args.test.ts.
const config: ExperimentConfig = {
  messages: 50,
  accounts: 10,
  crashRate: 0.02,
  batchSize: undefined,
  seed: 's2',
  modes: MODE_NAMES,
  concurrency: undefined,
  visibilityTimeoutSeconds: 5,
  faults: { ...NO_FAULTS, poisonRate: 0.1, killRate: 0.1 },
};

describe('the replay command', () => {
  it('names the seed, the sizes and every fault, and the local runtime’s settings', () => {
    expect(replayCommand(config)).toBe(
      'npm run experiment -- --seed s2 --messages 50 --accounts 10 --crash-rate 0.02 --poison-rate 0.1 ' +
        '--visibility-timeout 5 --kill-rate 0.1',
    );
  });

  it('names the marker retention and a switched-off age guard, embedded only', () => {
    const late = { ...config, markerTtlSeconds: 30, ageGuard: false };
    expect(replayCommand(late)).toMatch(/ --marker-ttl 30 --no-age-guard$/);
    expect(replayCommand({ ...config, ageGuard: true })).not.toMatch(/age-guard/);
    expect(replayCommand(late, 'aws')).not.toMatch(/--marker-ttl|--no-age-guard/);
  });

  it('names the outage window', () => {
    const outage = { ...config, faults: { ...NO_FAULTS, outage: { afterSeconds: 2, forSeconds: 30 } } };
    expect(replayCommand(outage)).toMatch(/ --outage-after 2 --outage-for 30$/);
    expect(replayCommand(outage, 'aws')).not.toMatch(/--outage/);
  });

  it('leaves the local runtime’s flags out on a deployed target', () => {
    const command = replayCommand(config, 'aws');
    expect(command).toMatch(/--target aws/);
    expect(command).toMatch(/--poison-rate 0.1/);
    expect(command).not.toMatch(/--kill-rate|--visibility-timeout/);
  });
});

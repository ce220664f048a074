import { describe, expect, it } from 'vitest';
import { MODE_NAMES } from '../../../../contract/topology.js';
import type { EnvironmentDescription } from '../../../../harness/environments/environment.js';
import type { RedeployChanges } from '../../../../harness/environments/redeploy-command.js';
import { NO_FAULTS } from '../../../../harness/local-aws/faults/faults.js';
import { UsageError } from '../../../../harness/options/usage-error.js';
import type { ExperimentConfig } from '../../../../harness/run/experiment.js';
import { describeSettings, reconcileWithEnvironment } from '../../../../harness/run/reconcile.js';

const settings = {
  batchSize: 10,
  maxBatchingWindowSeconds: 0,
  maxConcurrency: 5,
  visibilityTimeoutSeconds: 180,
  functionTimeoutSeconds: 30,
  maxReceiveCount: 10,
};
const deployed: EnvironmentDescription = {
  target: 'aws',
  crashRate: 0,
  crashSeed: 'seed',
  modes: Object.fromEntries(MODE_NAMES.map((mode) => [mode, settings])) as EnvironmentDescription['modes'],
};
const config: ExperimentConfig = {
  messages: 200,
  accounts: 10,
  crashRate: 0.02,
  batchSize: 10,
  seed: 's',
  modes: MODE_NAMES,
  concurrency: undefined,
  visibilityTimeoutSeconds: 10,
  faults: NO_FAULTS,
};

describe('reconciling the run with a deployed stack', () => {
  it('takes the stack’s own modes when every mode was asked for (a redrive without --modes)', () => {
    const fourModes: EnvironmentDescription = {
      ...deployed,
      modes: { 'at-least-once': settings, 'effectively-once': settings } as EnvironmentDescription['modes'],
    };
    expect(reconcileWithEnvironment(config, new Set(), fourModes)).toMatchObject({ batchSize: 10 });
  });

  it('takes the deployed crash rate and batch size when the flags were not given', () => {
    expect(reconcileWithEnvironment(config, new Set(), deployed)).toMatchObject({
      crashRate: 0,
      batchSize: 10,
    });
  });

  /** The deployed environment's command (redeploy-command.test.ts tests it), with the change asked for. */
  const redeploy = (changes: RedeployChanges) => `<redeploy ${JSON.stringify(changes)}>`;

  it('refuses a --crash-rate that contradicts the deployment and says how to redeploy', () => {
    const run = () => reconcileWithEnvironment(config, new Set(['crash-rate']), deployed, redeploy);
    expect(run).toThrow(UsageError);
    expect(run).toThrow(
      'the stack was deployed with crashRate=0, but --crash-rate 0.02 was asked for. ' +
        'Drop --crash-rate, or redeploy: <redeploy {"crashRate":0.02}>',
    );
  });

  it('refuses a --batch-size that contradicts the deployment', () => {
    const run = () =>
      reconcileWithEnvironment({ ...config, batchSize: 50 }, new Set(['batch-size']), deployed, redeploy);
    expect(run).toThrow(
      'deployed with batch size 10, but --batch-size 50 was asked for. Drop --batch-size, or redeploy: <redeploy {"batchSize":50}>',
    );
  });

  it('without a command to redeploy with, names the context to change', () => {
    const run = () => reconcileWithEnvironment(config, new Set(['crash-rate']), deployed);
    expect(run).toThrow('Drop --crash-rate, or redeploy with -c crashRate=0.02');
  });

  it('accepts flags that agree with the deployment', () => {
    const agreeing = { ...config, crashRate: 0, batchSize: 10 };
    expect(reconcileWithEnvironment(agreeing, new Set(['crash-rate', 'batch-size']), deployed)).toEqual(
      agreeing,
    );
  });
});

describe('the settings banner', () => {
  it('names the modes that run, and only those', () => {
    const charge = { ...settings, visibilityTimeoutSeconds: 360 };
    const everyMode: EnvironmentDescription = {
      ...deployed,
      target: 'embedded',
      modes: Object.fromEntries(
        MODE_NAMES.map((mode) => [mode, mode.startsWith('charge') ? charge : settings]),
      ) as EnvironmentDescription['modes'],
    };
    const banner = describeSettings(everyMode, ['at-least-once', 'effectively-once']);
    expect(banner).toBe(
      'embedded: crash rate 0, crash seed seed; at-least-once, effectively-once: batch 10, concurrency 5, visibility 180 s, timeout 30 s, maxReceiveCount 10',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { MODE_NAMES } from '../../../../contract/topology.js';
import type { EnvironmentDescription } from '../../../../harness/environments/environment.js';
import type { ExperimentConfig } from '../../../../harness/experiment/experiment.js';
import { reconcileWithEnvironment } from '../../../../harness/experiment/reconcile.js';
import { NO_FAULTS } from '../../../../harness/faults/faults.js';
import { UsageError } from '../../../../harness/options/usage-error.js';

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
  it('takes the deployed crash rate and batch size when the flags were not given', () => {
    expect(reconcileWithEnvironment(config, new Set(), deployed, 'DeliverySemantics')).toMatchObject({
      crashRate: 0,
      batchSize: 10,
    });
  });

  it('refuses a --crash-rate that contradicts the deployment and says how to redeploy', () => {
    const run = () => reconcileWithEnvironment(config, new Set(['crash-rate']), deployed, 'Sandbox');
    expect(run).toThrow(UsageError);
    expect(run).toThrow('npx cdk deploy -c stackName=Sandbox -c crashRate=0.02 -c crashSeed=seed');
  });

  it('refuses a --batch-size that contradicts the deployment', () => {
    const run = () =>
      reconcileWithEnvironment(
        { ...config, batchSize: 50 },
        new Set(['batch-size']),
        deployed,
        'DeliverySemantics',
      );
    expect(run).toThrow(/deployed with batch size 10, but --batch-size 50/);
  });

  it('tells a LocalStack user to redeploy there', () => {
    const run = () =>
      reconcileWithEnvironment(
        config,
        new Set(['crash-rate']),
        { ...deployed, target: 'localstack' },
        'DeliverySemantics',
      );
    expect(run).toThrow('npm run deploy:local -- -c crashRate=0.02');
  });

  it('accepts flags that agree with the deployment', () => {
    const agreeing = { ...config, crashRate: 0, batchSize: 10 };
    expect(reconcileWithEnvironment(agreeing, new Set(['crash-rate', 'batch-size']), deployed, 'X')).toEqual(
      agreeing,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_DEPLOYMENT } from '../../../../contract/deployment-settings.js';
import { modeOutputs, STACK_OUTPUTS } from '../../../../contract/stack-outputs.js';
import { MODE_NAMES } from '../../../../contract/topology.js';
import { redeployCommand } from '../../../../harness/environments/redeploy-command.js';

const TO_ADD =
  ', plus any alarmEmail, markerRetentionDays, batchSize, maxReceiveCount or providerLostResponseRate you deployed it with';

function stack(entries: Record<string, string>) {
  return new Map(Object.entries(entries));
}

describe('the command that redeploys a stack from this checkout', () => {
  it('keeps what the outputs reveal: crash rate and seed, provisioned pollers, the relay, the modes', () => {
    const outputs = stack({
      [STACK_OUTPUTS.crashRate]: '0.02',
      [STACK_OUTPUTS.crashSeed]: 'demo',
      [STACK_OUTPUTS.deployedModes]: 'at-least-once,effectively-once',
      [modeOutputs('at-least-once').scaling]: 'provisionedPollers=2:10',
      [STACK_OUTPUTS.outboxTableName]: 'outbox',
    });
    expect(redeployCommand({ target: 'aws', stackName: 'Sandbox' }, outputs)).toBe(
      '`npx cdk deploy -c stackName=Sandbox -c crashRate=0.02 -c crashSeed=demo ' +
        '-c modes=at-least-once,effectively-once -c outboxRelay=true -c provisionedPollers=2:10`' +
        TO_ADD,
    );
    expect(
      redeployCommand({ target: 'aws', stackName: 'Sandbox' }, outputs, { modes: ['effectively-once'] }),
    ).toContain('-c modes=effectively-once -c outboxRelay=true -c provisionedPollers=2:10`');
  });

  it('leaves out what is at its default, and says modes=all for every mode (which brings the relay)', () => {
    const outputs = stack({
      [STACK_OUTPUTS.crashRate]: '0',
      [STACK_OUTPUTS.crashSeed]: 'seed',
      [STACK_OUTPUTS.deployedModes]: MODE_NAMES.join(','),
      [STACK_OUTPUTS.outboxTableName]: 'outbox',
    });
    expect(redeployCommand({ target: 'aws', stackName: 'DeliverySemantics' }, outputs)).toBe(
      `\`npx cdk deploy -c stackName=DeliverySemantics -c modes=all\`${TO_ADD}`,
    );
  });

  it('on LocalStack, names the stack only when it is not the default one', () => {
    const outputs = stack({ [STACK_OUTPUTS.deployedModes]: 'at-most-once' });
    expect(redeployCommand({ target: 'localstack', stackName: 'DeliverySemantics' }, outputs)).toBe(
      `\`npm run deploy:local -- -c modes=at-most-once\`${TO_ADD}`,
    );
    expect(redeployCommand({ target: 'localstack', stackName: 'Mine' }, outputs)).toContain(
      '`npm run deploy:local -- -c stackName=Mine -c modes=at-most-once`',
    );
  });

  it('sets the crash rate or batch size asked for, whatever the default, and stops naming batchSize', () => {
    const outputs = stack({ [STACK_OUTPUTS.crashRate]: '0.05', [STACK_OUTPUTS.crashSeed]: 'seed' });
    expect(
      redeployCommand({ target: 'localstack', stackName: 'DeliverySemantics' }, outputs, {
        crashRate: DEFAULT_DEPLOYMENT.crashRate,
        batchSize: 5,
      }),
    ).toBe(
      `\`npm run deploy:local -- -c crashRate=${DEFAULT_DEPLOYMENT.crashRate} -c batchSize=5\`, ` +
        'plus any alarmEmail, markerRetentionDays, maxReceiveCount or providerLostResponseRate you deployed it with',
    );
  });

  it('for a stack too old to list its modes, redeploys the default ones', () => {
    expect(redeployCommand({ target: 'aws', stackName: 'Old' }, stack({}))).toBe(
      `\`npx cdk deploy -c stackName=Old\`${TO_ADD}`,
    );
  });
});

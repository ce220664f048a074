import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { deploymentSettingsFromContext } from '../../contract/deployment-settings.js';
import { modeOutputs, STACK_OUTPUTS } from '../../contract/stack-outputs.js';
import { DEFAULT_MODES, MODE_NAMES } from '../../contract/topology.js';
import { DeliverySemanticsStack } from '../../stack/delivery-semantics-stack.js';

/** The stack as `cdk synth -c …` builds it from those context values, bundling skipped. */
function stackFromContext(context: Record<string, string>) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const settings = deploymentSettingsFromContext((key) => context[key]);
  const stack = new DeliverySemanticsStack(app, 'Test', { settings });
  return { stack, template: Template.fromStack(stack) };
}

const count = (template: Template, type: string) => Object.keys(template.findResources(type)).length;

describe('the stack, from context: deploy only what you want', () => {
  it("with no context: the default run's modes and the verifier, no payment provider, no outbox relay", () => {
    const { stack, template } = stackFromContext({});
    expect(stack.deployedModes).toEqual(DEFAULT_MODES);
    expect(count(template, 'AWS::Lambda::Function')).toBe(DEFAULT_MODES.length + 1);
    expect(count(template, 'AWS::Lambda::Url')).toBe(0);
    expect(stack.paymentProvider).toBeUndefined();
    expect(stack.outbox).toBeUndefined();
    template.hasOutput(STACK_OUTPUTS.deployedModes, { Value: DEFAULT_MODES.join(',') });
    template.hasOutput(modeOutputs('effectively-once').scaling, { Value: 'maxConcurrency=5' });
  });

  it('with -c modes=all: every mode, the payment provider and the outbox relay', () => {
    const { stack, template } = stackFromContext({ modes: 'all' });
    expect(stack.deployedModes).toEqual(MODE_NAMES);
    // The consumers, the verifier, the provider, the relay.
    expect(count(template, 'AWS::Lambda::Function')).toBe(MODE_NAMES.length + 3);
    expect(stack.outbox).toBeDefined();
    expect(stack.paymentProvider).toBeDefined();
  });

  it('brings the payment provider with a charge mode only, and the relay when asked', () => {
    const charge = stackFromContext({ modes: 'at-least-once,charge-with-key' });
    expect(charge.stack.deployedModes).toEqual(['at-least-once', 'charge-with-key']);
    expect(charge.stack.paymentProvider).toBeDefined();
    expect(charge.stack.outbox).toBeUndefined();
    const relay = stackFromContext({ modes: 'effectively-once', outboxRelay: 'true' });
    expect(relay.stack.paymentProvider).toBeUndefined();
    expect(relay.stack.outbox).toBeDefined();
    // The verifier sweeps the deployed DLQs only.
    const env = relay.template.findResources('AWS::Lambda::Function');
    const verifier = Object.values(env).find(
      (fn) => fn.Properties.Environment?.Variables?.DEAD_LETTER_QUEUE_URLS !== undefined,
    );
    expect(JSON.stringify(verifier?.Properties.Environment.Variables.DEAD_LETTER_QUEUE_URLS)).toContain(
      'effectively-once',
    );
    expect(JSON.stringify(verifier?.Properties.Environment.Variables.DEAD_LETTER_QUEUE_URLS)).not.toContain(
      'at-least-once',
    );
  });

  it('refuses a mode the topology lacks, a malformed list and a malformed relay flag, with the fix', () => {
    expect(() => stackFromContext({ modes: 'at-least-once,exactly-once' })).toThrow(
      /context modes names exactly-once, which the topology lacks \(the modes: at-most-once, .*; or -c modes=all\)/,
    );
    expect(() => stackFromContext({ modes: ',' })).toThrow(/must name modes, comma-separated, or be all/);
    expect(() => stackFromContext({ outboxRelay: 'yes' })).toThrow(
      'context outboxRelay="yes" must be true or false',
    );
  });

  it('with -c provisionedPollers=2:10: provisioned mode on every mapping, and outputs that say so', () => {
    const { stack, template } = stackFromContext({ modes: 'all', provisionedPollers: '2:10' });
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (mapping) => String(JSON.stringify(mapping.Properties.EventSourceArn)).includes('Queue'),
    );
    // Every consumer's mapping (the relay's stream mapping is no SQS mapping).
    expect(mappings).toHaveLength(stack.deployedModes.length);
    for (const mapping of mappings) {
      expect(mapping.Properties.ProvisionedPollerConfig).toEqual({ MinimumPollers: 2, MaximumPollers: 10 });
      expect(mapping.Properties.ScalingConfig).toBeUndefined();
    }
    for (const mode of stack.deployedModes) {
      template.hasOutput(modeOutputs(mode).scaling, { Value: 'provisionedPollers=2:10' });
      expect(template.findOutputs(modeOutputs(mode).maxConcurrency)).toEqual({});
    }
  });

  it('refuses invalid pollers at synth: malformed by the context parser, out of range by aws-cdk-lib', () => {
    expect(() => stackFromContext({ provisionedPollers: 'lots' })).toThrow(
      /context provisionedPollers="lots" must be MIN:MAX, two whole numbers of pollers \(e.g. -c provisionedPollers=2:10/,
    );
    expect(() => stackFromContext({ provisionedPollers: '10:2' })).toThrow(
      'Minimum provisioned pollers must be less than or equal to maximum provisioned pollers, got: min=10, max=2',
    );
    expect(() => stackFromContext({ provisionedPollers: '2:5000' })).toThrow(
      'Maximum provisioned pollers for SQS must be between 2 and 2000 inclusive, got: 5000',
    );
  });
});

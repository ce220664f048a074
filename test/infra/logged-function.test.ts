import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoggedFunction, type LoggedFunctionProps } from '@sqs-delivery-semantics/cdk-constructs';
import { App, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { handlerEntry } from '../../lib/bundling.js';
import { LAB_PACKAGING } from '../../lib/nodejs-bundling.js';

/** One function alone in a stack, bundling skipped (test/infra/synth.test.ts bundles for real). */
function functionIn(
  props: Partial<LoggedFunctionProps> = {},
  app = new App({ context: { 'aws:cdk:bundling-stacks': [] } }),
) {
  const stack = new Stack(app, 'Function');
  const fn = new LoggedFunction(stack, 'Worker', { entry: handlerEntry('verifier'), ...props });
  return { stack, fn, template: Template.fromStack(stack) };
}

describe('LoggedFunction (packages/cdk-constructs/src/logged-function.ts)', () => {
  it('pins nodejs24.x on arm64, with the documented defaults', () => {
    functionIn().template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 30,
      MemorySize: 256,
    });
    functionIn({ timeout: Duration.seconds(90), memorySize: 1024 }).template.hasResourceProperties(
      'AWS::Lambda::Function',
      { Timeout: 90, MemorySize: 1024 },
    );
  });

  it('logs to its own log group, kept a week, which its role alone may write to', () => {
    const { template, stack, fn } = functionIn();
    template.resourceCountIs('AWS::Logs::LogGroup', 1);
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
    const logGroup = stack.getLogicalId(fn.functionLogGroup.node.defaultChild as never);
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogGroup: { Ref: logGroup } },
    });
    // No AWSLambdaBasicExecutionRole: it would allow writing to every log group of the account.
    template.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) =>
        policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[],
    );
    expect(statements).toHaveLength(1);
    expect([statements[0]?.Action].flat().every((action) => action?.startsWith('logs:'))).toBe(true);
    expect(statements[0]?.Resource).toEqual({ 'Fn::GetAtt': [logGroup, 'Arn'] });
  });

  it('creates its log group and role beside itself, as <id>Logs and <id>Role', () => {
    const { stack, fn } = functionIn();
    expect(fn.functionLogGroup.node.scope).toBe(stack);
    expect(fn.functionLogGroup.node.id).toBe('WorkerLogs');
    expect(fn.functionRole.node.id).toBe('WorkerRole');
    expect(fn.role).toBe(fn.functionRole);
  });

  // nodejs24.x is the newest Node runtime aws-cdk-lib 2.276.0 knows, so AwsSolutions-L1 passes
  // today; the construct acknowledges it for the day a newer one appears and the pin stays.
  it("passes cdk-nag's AWS Solutions rules alone in a stack", () => {
    const app = new App({
      context: { 'aws:cdk:bundling-stacks': [] },
      outdir: mkdtempSync(join(tmpdir(), 'nag-fn-')),
    });
    functionIn({}, app);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
  });

  it("takes its packaging from the caller: the lab's is this project's esbuild options, root and lockfile", () => {
    expect(LAB_PACKAGING.bundling?.target).toBe('node24');
    expect(LAB_PACKAGING.depsLockFilePath).toMatch(/\/package-lock\.json$/);
    expect(() => functionIn(LAB_PACKAGING)).not.toThrow();
  });
});

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { chargesPartition, PROVIDER_TTL_ATTRIBUTE } from '../../services/payment-provider/provider-table.js';
import { PaymentProvider } from '../../stack/payment-provider.js';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

/** A test stack: the provider, a consumer role that may charge, a verifier role that may read. */
function synth(app = new App({ context: { 'aws:cdk:bundling-stacks': [] } })) {
  const stack = new Stack(app, 'ProviderTest');
  const provider = new PaymentProvider(stack, 'Provider', { leaseSeconds: 7 });
  const consumer = new iam.Role(stack, 'Consumer', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  const verifier = new iam.Role(stack, 'Verifier', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  provider.grantCharge(consumer);
  provider.grantReadCharges(verifier);
  return { app, stack, provider, consumer, verifier };
}

const actionsOf = (statement: Statement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

describe('PaymentProvider construct', () => {
  let template: Template;
  let parts: ReturnType<typeof synth>;
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    parts.stack.getLogicalId(construct.node.defaultChild as never);

  /** Every statement of the policies attached to `role`. */
  const statementsOf = (role: iam.Role): Statement[] =>
    Object.values(
      template.findResources('AWS::IAM::Policy', {
        Properties: { Roles: [{ Ref: logicalId(role) }] },
      }),
    ).flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);

  beforeAll(() => {
    parts = synth();
    template = Template.fromStack(parts.stack);
  });

  it('has its own table: pk/sk, on demand, PITR, TTL on the attribute the provider writes', () => {
    expect(PROVIDER_TTL_ATTRIBUTE).toBe('expiresAt');
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: PROVIDER_TTL_ATTRIBUTE, Enabled: true },
    });
  });

  it('runs the provider handler on the pinned runtime, told its table and lease', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Environment: {
        Variables: {
          PROVIDER_TABLE_NAME: { Ref: logicalId(parts.provider.table) },
          PROVIDER_LEASE_SECONDS: '7',
        },
      },
    });
  });

  it('has a Function URL that only signed callers may use (AWS_IAM)', () => {
    template.resourceCountIs('AWS::Lambda::Url', 1);
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'AWS_IAM',
      TargetFunctionArn: { 'Fn::GetAtt': [logicalId(parts.provider.fn), 'Arn'] },
    });
    // No resource policy opens it to anyone: the grants are identity policies.
    template.resourceCountIs('AWS::Lambda::Permission', 0);
  });

  it('lets the provider write its own table only: Put, Update, Get, no Query, no Delete', () => {
    const role = parts.provider.fn.role as iam.Role;
    const dynamo = statementsOf(role).filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.flatMap(actionsOf).sort()).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    for (const statement of dynamo) {
      // The table alone: it has no index to reach.
      expect(statement.Resource).toEqual([{ 'Fn::GetAtt': [logicalId(parts.provider.table), 'Arn'] }]);
    }
  });

  it('grantCharge gives exactly InvokeFunctionUrl (AWS_IAM) and InvokeFunction (via the URL only) on the provider', () => {
    const fnArn = { 'Fn::GetAtt': [logicalId(parts.provider.fn), 'Arn'] };
    expect(statementsOf(parts.consumer)).toEqual([
      {
        Effect: 'Allow',
        Action: 'lambda:InvokeFunctionUrl',
        Resource: fnArn,
        Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
      },
      {
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: fnArn,
        Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } },
      },
    ]);
  });

  it('grantReadCharges gives Query on the charge partitions and nothing else (not the keys and their saved responses)', () => {
    expect(statementsOf(parts.verifier)).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:Query',
        Resource: { 'Fn::GetAtt': [logicalId(parts.provider.table), 'Arn'] },
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${chargesPartition('')}*`] },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      },
    ]);
  });

  it('writes logs to its own log group only, with no AWS managed policy', () => {
    const role = parts.provider.fn.role as iam.Role;
    for (const each of Object.values(template.findResources('AWS::IAM::Role'))) {
      expect(each.Properties.ManagedPolicyArns).toBeUndefined();
    }
    const logs = statementsOf(role).filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
    expect(logs).toHaveLength(1);
    expect(logs[0]?.Resource).toEqual({ 'Fn::GetAtt': [logicalId(parts.provider.fn.logGroup), 'Arn'] });
  });

  it('passes cdk-nag’s AWS Solutions rules (the pinned runtime acknowledged, with its reason)', () => {
    const app = new App({
      context: { 'aws:cdk:bundling-stacks': [] },
      outdir: mkdtempSync(join(tmpdir(), 'nag-provider-')),
    });
    synth(app);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    // Synth throws "Validation failed" and lists the violations if any rule is broken.
    expect(() => app.synth()).not.toThrow();
  });
});

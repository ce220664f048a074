import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type Environment } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentSettingsFromContext } from '../../../../../contract/deployment-settings.js';
import { DEFAULT_STACK_NAME } from '../../../../../contract/stack-outputs.js';
import { readCloudAssembly } from '../../../../../harness/environments/assembly/cloud-assembly.js';
import {
  type ResolvedResource,
  type ResolvedStack,
  resolveStack,
  type StackScope,
} from '../../../../../harness/environments/assembly/resolve-stack.js';
import { DeliverySemanticsStack } from '../../../../../stack/delivery-semantics-stack.js';

/**
 * The repository's own stack, synthesized into a cloud assembly as `cdk synth` writes it, then
 * resolved. In process and with bundling skipped (the CLI's synth with bundling takes 12 s): the
 * template is the stack's own; the functions' code, which these tests do not read, is not bundled.
 * `cdk.out` itself is not read: a fresh clone has none. The default modes are synthesized without
 * an environment (`${AWS::Region}` in the ARNs), `-c modes=all` for us-east-1 as the CLI
 * synthesizes it here (the Region literal in the ARNs).
 */
function synthesize(context: Record<string, string>, env?: Environment): string {
  const key = JSON.stringify([context, env]);
  const known = synthesized.get(key);
  if (known !== undefined) return known;
  const outdir = mkdtempSync(join(tmpdir(), 'template-stack-'));
  // As the CLI synthesizes: construct paths in Metadata, CDK's usage metadata (CDKMetadata).
  const app = new App({
    outdir,
    context: {
      'aws:cdk:bundling-stacks': [],
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:version-reporting': true,
    },
  });
  const settings = deploymentSettingsFromContext((name) => context[name]);
  new DeliverySemanticsStack(app, DEFAULT_STACK_NAME, { settings, ...(env ? { env } : {}) });
  app.synth();
  synthesized.set(key, outdir);
  return outdir;
}
const synthesized = new Map<string, string>();
afterAll(() => {
  for (const dir of synthesized.values()) rmSync(dir, { recursive: true, force: true });
});

const ACCOUNT = '000000000000';
const scope = (region: string): StackScope => ({
  account: ACCOUNT,
  region,
  salt: 'unit',
  queueUrl: (name) => `http://127.0.0.1:9324/${ACCOUNT}/${name}`,
  functionUrl: (name) => `http://127.0.0.1:9000/lambda-url/${name}/`,
  createdAt: new Date('2024-05-01T12:00:00Z'),
});

/** The one resource whose logical id starts with `prefix` (CDK appends a hash). */
function only(stack: ResolvedStack, prefix: string, type: string): ResolvedResource {
  const found = stack.byType(type).filter((resource) => resource.logicalId.startsWith(prefix));
  expect(found, prefix).toHaveLength(1);
  return found[0] as ResolvedResource;
}

/** The intrinsics left unresolved in a value (an IAM statement's Condition is an object: data). */
function leftovers(value: unknown): string[] {
  return [...JSON.stringify(value).matchAll(/"(Ref|Fn::[A-Za-z]+)":|"(Condition)":"/g)].map((m) => m[0]);
}

/** The names CloudFormation's services allow (SQS 80 with `.fifo`, Lambda 64, DynamoDB 255, IAM 64). */
const LIMITS: Record<string, number> = {
  'AWS::SQS::Queue': 80,
  'AWS::Lambda::Function': 64,
  'AWS::DynamoDB::Table': 255,
  'AWS::IAM::Role': 64,
  'AWS::Logs::LogGroup': 512,
};

describe.each([
  { label: 'the default modes', context: {} as Record<string, string>, env: undefined, region: 'eu-west-1' },
  { label: '-c modes=all', context: { modes: 'all' }, env: { region: 'us-east-1' }, region: 'us-east-1' },
])('the stack with $label, resolved', ({ context, env, region }) => {
  let stack: ResolvedStack;
  beforeAll(() => {
    stack = resolveStack(readCloudAssembly(synthesize(context, env)), scope(region));
  });

  it("resolves every function's environment to strings, TABLE_NAME the ledger's generated name", () => {
    const ledger = only(stack, 'Ledger', 'AWS::DynamoDB::Table');
    expect(ledger.physicalId).toMatch(/^DeliverySemantics-LedgerB7379752-[A-Z0-9]{12}$/);
    const functions = stack.byType('AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThanOrEqual(5);
    for (const fn of functions) {
      const variables = (fn.properties.Environment as { Variables: Record<string, unknown> }).Variables;
      for (const [key, value] of Object.entries(variables))
        expect(typeof value, `${fn.logicalId} ${key}`).toBe('string');
      if ('TABLE_NAME' in variables) expect(variables.TABLE_NAME).toBe(ledger.physicalId);
    }
  });

  it("gives at-most-once its queue's URL as QUEUE_URL, and the mapping that queue's ARN", () => {
    const queue = only(stack, 'AtMostOnceQueue', 'AWS::SQS::Queue');
    const fn = only(stack, 'AtMostOnceFunction', 'AWS::Lambda::Function');
    expect((fn.properties.Environment as { Variables: Record<string, string> }).Variables.QUEUE_URL).toBe(
      `http://127.0.0.1:9324/${ACCOUNT}/${queue.name}`,
    );
    const mapping = only(stack, 'AtMostOnceFunctionSqsEventSource', 'AWS::Lambda::EventSourceMapping');
    expect(mapping.properties.EventSourceArn).toBe(`arn:aws:sqs:${region}:${ACCOUNT}:${queue.name}`);
    expect(mapping.properties.FunctionName).toBe(fn.name);
    expect(mapping.physicalId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it("makes every policy statement's Resource a concrete ARN, and leaves no intrinsic anywhere", () => {
    const policies = [
      ...stack.byType('AWS::IAM::Policy'),
      ...stack.byType('AWS::SQS::QueuePolicy'),
      ...stack.byType('AWS::SNS::TopicPolicy'),
    ];
    for (const policy of policies) {
      const { Statement } = policy.properties.PolicyDocument as { Statement: { Resource: unknown }[] };
      for (const resource of Statement.flatMap((statement) => [statement.Resource].flat())) {
        expect(resource, policy.logicalId).toMatch(
          new RegExp(`^(\\*|arn:aws:[a-z0-9-]+:(${region})?:${ACCOUNT}:.+)$`),
        );
      }
    }
    for (const resource of stack.resources.values())
      expect(leftovers(resource.properties), resource.logicalId).toEqual([]);
  });

  it('resolves the outputs', () => {
    const ledger = only(stack, 'Ledger', 'AWS::DynamoDB::Table');
    expect(stack.outputs.TableName).toBe(ledger.physicalId);
    expect(stack.outputs.AtMostOnceQueueUrl).toBe(
      only(stack, 'AtMostOnceQueue', 'AWS::SQS::Queue').physicalId,
    );
    expect(stack.outputs.VerifierFunctionName).toBe(only(stack, 'Verifier', 'AWS::Lambda::Function').name);
    expect(stack.outputs.AlarmTopicArn).toMatch(
      new RegExp(`^arn:aws:sns:${region}:${ACCOUNT}:DeliverySemantics-`),
    );
    for (const value of Object.values(stack.outputs)) expect(value).not.toMatch(/Ref|Fn::|\[object/);
  });

  it("fits every generated name in its service's limit, with the stack's prefix", () => {
    for (const [type, limit] of Object.entries(LIMITS)) {
      for (const resource of stack.byType(type)) {
        expect(resource.name.length, resource.logicalId).toBeLessThanOrEqual(limit);
        expect(resource.name).toMatch(/^DeliverySemantics-[A-Za-z0-9]+-[A-Z0-9]{12}(\.fifo)?$/);
      }
    }
  });

  it('ignores the bootstrap check and the CDK metadata, saying why', () => {
    const ignored = new Map(stack.ignored.map((entry) => [entry.what, entry.why]));
    expect(ignored.get('parameter BootstrapVersion')).toMatch(/no bootstrap stack/);
    expect(ignored.get('rule CheckBootstrapVersion')).toMatch(/no bootstrap stack/);
    expect(ignored.get('AWS::CDK::Metadata CDKMetadata')).toMatch(/usage metadata/);
    // Without a Region, CDK deploys its metadata under a condition (the Regions that have the type).
    if (env === undefined) expect(ignored.get('condition CDKMetadataAvailable')).toMatch(/usage metadata/);
  });

  it('creates each function after its role and policy, each mapping after its function and queue', () => {
    const at = (id: string) => stack.creationOrder.indexOf(id);
    for (const mapping of stack.byType('AWS::Lambda::EventSourceMapping')) {
      const fn = stack
        .byType('AWS::Lambda::Function')
        .find((f) => f.name === mapping.properties.FunctionName);
      expect(fn, mapping.logicalId).toBeDefined();
      expect(at((fn as ResolvedResource).logicalId)).toBeLessThan(at(mapping.logicalId));
      const policy = stack.byType('AWS::IAM::Policy').find((p) =>
        (p.properties.Roles as string[]).includes(
          String((fn as ResolvedResource).properties.Role)
            .split('/')
            .pop() as string,
        ),
      );
      expect(at((policy as ResolvedResource).logicalId)).toBeLessThan(at((fn as ResolvedResource).logicalId));
    }
  });
});

describe('-c modes=all: FIFO, the Function URL, the stream mapping', () => {
  let stack: ResolvedStack;
  let dir: string;
  beforeAll(() => {
    dir = synthesize({ modes: 'all' }, { region: 'us-east-1' });
    stack = resolveStack(readCloudAssembly(dir), scope('us-east-1'));
  });

  it('keeps `.fifo` on the FIFO queue and its DLQ, and points the redrive at the DLQ', () => {
    const queue = only(stack, 'FifoVersionedQueue', 'AWS::SQS::Queue');
    const dlq = only(stack, 'FifoVersionedDeadLetterQueue', 'AWS::SQS::Queue');
    expect(queue.name).toMatch(/^DeliverySemantics-FifoVersionedQueue186B820A-[A-Z0-9]{12}\.fifo$/);
    expect(dlq.name.endsWith('.fifo')).toBe(true);
    expect((queue.properties.RedrivePolicy as { deadLetterTargetArn: string }).deadLetterTargetArn).toBe(
      dlq.attributes.Arn,
    );
  });

  it("gives the charge modes the provider's Function URL (AWS_IAM) and lets them invoke it through it", () => {
    const url = only(stack, 'PaymentProviderFunctionFunctionUrl', 'AWS::Lambda::Url');
    const provider = only(stack, 'PaymentProviderFunction', 'AWS::Lambda::Function');
    expect(url.properties).toEqual({ AuthType: 'AWS_IAM', TargetFunctionArn: provider.attributes.Arn });
    expect(url.attributes.FunctionUrl).toBe(`http://127.0.0.1:9000/lambda-url/${provider.name}/`);
    expect(stack.outputs.PaymentProviderUrl).toBe(url.attributes.FunctionUrl);
    const charge = only(stack, 'ChargeWithKeyFunction', 'AWS::Lambda::Function');
    expect(
      (charge.properties.Environment as { Variables: Record<string, string> }).Variables.PROVIDER_URL,
    ).toBe(url.attributes.FunctionUrl);
    const policy = only(stack, 'ChargeWithKeyFunctionRoleDefaultPolicy', 'AWS::IAM::Policy');
    expect((policy.properties.PolicyDocument as { Statement: unknown[] }).Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Action: 'lambda:InvokeFunctionUrl', Resource: provider.attributes.Arn }),
        // A boolean stays a boolean.
        expect.objectContaining({ Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } } }),
        expect.objectContaining({
          Sid: 'OnlyTheEventSourceMappingDeletes',
          Condition: {
            ArnLike: { 'lambda:SourceFunctionArn': `arn:aws:lambda:us-east-1:${ACCOUNT}:function:*` },
          },
        }),
      ]),
    );
  });

  it("maps the relay to the outbox table's stream, its failures to a queue", () => {
    const outbox = only(stack, 'Outbox0', 'AWS::DynamoDB::Table');
    expect(outbox.attributes.StreamArn).toBe(`${outbox.attributes.Arn}/stream/2024-05-01T12:00:00.000`);
    const mapping = only(stack, 'OutboxRelayDynamoDBEventSource', 'AWS::Lambda::EventSourceMapping');
    expect(mapping.properties).toMatchObject({
      EventSourceArn: outbox.attributes.StreamArn,
      FunctionName: only(stack, 'OutboxRelay5', 'AWS::Lambda::Function').name,
      StartingPosition: 'TRIM_HORIZON',
      DestinationConfig: {
        OnFailure: { Destination: only(stack, 'OutboxRelayFailures', 'AWS::SQS::Queue').attributes.Arn },
      },
    });
  });

  it('is refused in another Region than the one it was synthesized for', () => {
    expect(() => resolveStack(readCloudAssembly(dir), scope('eu-west-1'))).toThrow(
      'stack DeliverySemantics was synthesized for region us-east-1, which its template names in literal ARNs: deploy it locally with region us-east-1, or synthesize for eu-west-1',
    );
  });
});

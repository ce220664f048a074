import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  readCloudAssembly,
  type Template,
} from '../../../../../harness/environments/assembly/cloud-assembly.js';
import { UnsupportedTemplateError } from '../../../../../harness/environments/assembly/intrinsics.js';
import {
  type ResolvedStack,
  resolveStack,
  type StackScope,
} from '../../../../../harness/environments/assembly/resolve-stack.js';
import {
  deterministicUuid,
  generatedName,
} from '../../../../../harness/environments/assembly/resource-types.js';

/** The hand-written template: the shapes the stack does not synthesize today. */
const assembly = readCloudAssembly(resolve(import.meta.dirname, '../../../../fixtures/assembly/unusual'));
const STACK = 'UnusualStackWithAFairlyLongNameForTruncation';
const FIFO = 'AVeryLongLogicalIdForAFifoQueueThatCloudFormationMustCutToFitEightyCharacters0123ABCD';

const scope: StackScope = {
  account: '111122223333',
  region: 'eu-west-1',
  salt: 'unit',
  queueUrl: (name) => `http://127.0.0.1:9324/111122223333/${name}`,
  functionUrl: (name) => `http://127.0.0.1:9000/${name}/`,
  createdAt: new Date('2024-05-01T12:00:00Z'),
};

function resource(stack: ResolvedStack, logicalId: string) {
  const found = stack.resources.get(logicalId);
  if (found === undefined) throw new Error(`no ${logicalId}`);
  return found;
}

describe('resolveStack on a hand-written template', () => {
  const stack = resolveStack(assembly, scope);

  it('names a FIFO queue <stack>-<logicalId>-<SUFFIX>.fifo, cut to 80 characters, the suffix kept', () => {
    const queue = resource(stack, FIFO);
    expect(queue.name).toBe(generatedName(STACK, FIFO, 'unit', 80, '.fifo'));
    expect(queue.name).toMatch(
      /^UnusualStackWithAFairlyLongNameForTruncation-AVeryLong[A-Za-z]*-[A-Z0-9]{12}\.fifo$/,
    );
    expect(queue.name).toHaveLength(80);
    expect(queue.physicalId).toBe(`http://127.0.0.1:9324/111122223333/${queue.name}`);
    expect(queue.attributes.Arn).toBe(`arn:aws:sqs:eu-west-1:111122223333:${queue.name}`);
  });

  it('lets an explicit name win, drops AWS::NoValue, resolves GetAtt in its string form', () => {
    const named = resource(stack, 'NamedQueue');
    expect(named.name).toBe('orders-eu-west-1-named');
    expect(named.properties).not.toHaveProperty('DelaySeconds');
    expect(named.properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: resource(stack, FIFO).attributes.Arn,
      maxReceiveCount: 3,
    });
  });

  it("labels a table's stream with the deployment's creation time", () => {
    expect(resource(stack, 'Table').attributes).toEqual({
      Arn: 'arn:aws:dynamodb:eu-west-1:111122223333:table/orders-table',
      StreamArn: 'arn:aws:dynamodb:eu-west-1:111122223333:table/orders-table/stream/2024-05-01T12:00:00.000',
    });
  });

  it("puts a role's path in its ARN and resolves its managed policy ARNs", () => {
    const role = resource(stack, 'Role');
    expect(role.name.length).toBeLessThanOrEqual(64);
    expect(role.attributes.Arn).toBe(`arn:aws:iam::111122223333:role/service/${role.name}`);
    expect(role.attributes.RoleId).toMatch(/^AROA[A-Z0-9]{17}$/);
    expect(role.properties.ManagedPolicyArns).toEqual([
      'arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
    ]);
  });

  it('resolves Fn::Sub (variables, attributes, a literal), Fn::Select over Fn::Split, pseudo parameters', () => {
    const fn = resource(stack, 'Function');
    expect(fn.properties.Environment).toEqual({
      Variables: {
        FIRST_OF_SPLIT: 'second',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Fn::Sub's `${!Literal}` gives `${Literal}`
        LITERAL: '${NotAVariable}',
        WITH_VARIABLES: `orders-table in ${STACK} (${resource(stack, 'Table').attributes.StreamArn})`,
        URL_SUFFIX: 'amazonaws.com',
      },
    });
    expect(fn.properties.Role).toBe(resource(stack, 'Role').attributes.Arn);
  });

  it("gives a Function URL the scope's URL and the function's ARN; a permission's Ref is FunctionName|Id", () => {
    const fn = resource(stack, 'Function');
    const url = resource(stack, 'PublicUrl');
    expect(url.attributes).toEqual({
      FunctionArn: fn.attributes.Arn,
      FunctionUrl: `http://127.0.0.1:9000/${fn.name}/`,
    });
    expect(url.properties.AuthType).toBe('NONE');
    const permission = resource(stack, 'PublicUrlPermission');
    expect(permission.physicalId).toBe(`${fn.attributes.Arn}|${permission.attributes.Id}`);
  });

  it('resolves the outputs, the stack id and a subscription ARN', () => {
    const topicArn = 'arn:aws:sns:eu-west-1:111122223333:alarms';
    expect(stack.stackArn).toBe(
      `arn:aws:cloudformation:eu-west-1:111122223333:stack/${STACK}/${deterministicUuid(STACK, '', 'unit')}`,
    );
    expect(stack.outputs).toEqual({
      NamedQueueUrl: 'http://127.0.0.1:9324/111122223333/orders-eu-west-1-named',
      StackId: stack.stackArn,
      FunctionUrl: resource(stack, 'PublicUrl').attributes.FunctionUrl,
      PermissionRef: resource(stack, 'PublicUrlPermission').physicalId,
      Subscription: `${topicArn}:${deterministicUuid(STACK, 'Subscription', 'unit')}`,
    });
  });

  it('names what it ignores, with why', () => {
    const what = stack.ignored.map((entry) => entry.what);
    expect(what).toEqual(
      expect.arrayContaining([
        'parameter BootstrapVersion',
        'rule CheckBootstrapVersion',
        'output Export (NamedQueueUrl)',
        'AWS::Lambda::Function Code.S3Bucket (Function)',
        'AWS::SNS::Subscription Endpoint (Subscription)',
      ]),
    );
    for (const entry of stack.ignored) expect(entry.why).not.toBe('');
  });

  it('orders creation after references: the role, then the function, then its URL and permission', () => {
    const at = (id: string) => stack.creationOrder.indexOf(id);
    expect(at('Role')).toBeLessThan(at('Function'));
    expect(at('Function')).toBeLessThan(at('PublicUrl'));
    expect(at('Function')).toBeLessThan(at('PublicUrlPermission'));
    expect(at(FIFO)).toBeLessThan(at('NamedQueue'));
    expect(at('Table')).toBeLessThan(at('Function'));
  });

  it('is deterministic per salt, and another salt gives other generated names (explicit ones stay)', () => {
    const again = resolveStack(assembly, scope);
    const other = resolveStack(assembly, { ...scope, salt: 'other' });
    expect(resource(again, FIFO).name).toBe(resource(stack, FIFO).name);
    expect(resource(other, FIFO).name).not.toBe(resource(stack, FIFO).name);
    expect(resource(other, FIFO).name.endsWith('.fifo')).toBe(true);
    expect(resource(other, 'NamedQueue').name).toBe('orders-eu-west-1-named');
  });
});

/** A copy of the fixture's template, edited freely by the refusal tests. */
// biome-ignore lint/suspicious/noExplicitAny: a JSON document each test reshapes its own way
type Editable = Record<string, any>;

/** The refusal of `edit` applied to a copy of the fixture's template. */
function refusal(edit: (template: Editable) => void, at: Partial<StackScope> = {}): string {
  const template = structuredClone(assembly.template) as Editable;
  edit(template);
  try {
    resolveStack({ ...assembly, template: template as Template }, { ...scope, ...at });
  } catch (error) {
    expect(error).toBeInstanceOf(UnsupportedTemplateError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('resolved, not refused');
}

const SUPPORTED = '(supported: Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split)';
const VARIABLE = 'Resources.Function.Properties.Environment.Variables.Y';

describe('resolveStack refuses, in one line naming it', () => {
  it('a resource type not in the table', () => {
    expect(refusal((t) => (t.Resources.Bucket = { Type: 'AWS::S3::Bucket' }))).toBe(
      'Resources.Bucket (AWS::S3::Bucket): type AWS::S3::Bucket is not supported by the local runtime',
    );
  });

  it('a property not in the table', () => {
    expect(refusal((t) => (t.Resources.NamedQueue.Properties.RedriveAllowPolicy = {}))).toBe(
      'Resources.NamedQueue (AWS::SQS::Queue): property RedriveAllowPolicy is not supported by the local runtime',
    );
  });

  it.each([
    ['Fn::If', ['IsProd', 'a', 'b']],
    ['Fn::ImportValue', 'SharedTableName'],
    ['Fn::FindInMap', ['Map', 'Key', 'Value']],
    ['Fn::GetAZs', ''],
    ['Fn::Base64', 'x'],
    ['Fn::Cidr', ['10.0.0.0/16', 4, 8]],
  ])('%s', (name, argument) => {
    expect(
      refusal((t) => (t.Resources.Function.Properties.Environment.Variables.Y = { [name]: argument })),
    ).toBe(`${VARIABLE}: ${name} is not supported by the local runtime ${SUPPORTED}`);
  });

  it('a condition: the Conditions section, a resource Condition, the condition function', () => {
    expect(refusal((t) => (t.Conditions = { IsProd: { 'Fn::Equals': ['a', 'b'] } }))).toBe(
      'Conditions.IsProd: conditions are not supported by the local runtime',
    );
    expect(refusal((t) => (t.Resources.Topic.Condition = 'IsProd'))).toBe(
      'Resources.Topic (AWS::SNS::Topic): Condition is not supported by the local runtime',
    );
    expect(
      refusal((t) => (t.Resources.Function.Properties.Environment.Variables.Y = { Condition: 'IsProd' })),
    ).toBe(`${VARIABLE}: Condition is not supported by the local runtime ${SUPPORTED}`);
  });

  it('a parameter with no default, or one of a type it cannot supply', () => {
    expect(refusal((t) => (t.Parameters.Env = { Type: 'String' }))).toBe(
      'Parameters.Env: a parameter without a default is not supported by the local runtime (nothing supplies its value)',
    );
    expect(
      refusal((t) => (t.Parameters.Ami = { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/ami' })),
    ).toBe(
      'Parameters.Ami: a parameter of type AWS::SSM::Parameter::Value<String> is not supported by the local runtime (String and Number only)',
    );
  });

  it('a rule other than CheckBootstrapVersion, a transform', () => {
    expect(refusal((t) => (t.Rules.OnlyProd = { Assertions: [] }))).toBe(
      'Rules.OnlyProd: rules are not supported by the local runtime',
    );
    expect(refusal((t) => (t.Transform = 'AWS::Serverless-2016-10-31'))).toBe(
      'Transform: Transform is not supported by the local runtime',
    );
  });

  it('a Ref or GetAtt the resource table does not provide', () => {
    const set = (value: unknown) => (t: Editable) => {
      t.Resources.Function.Properties.Environment.Variables.Y = value;
    };
    expect(refusal(set({ 'Fn::GetAtt': ['Table', 'Bogus'] }))).toBe(
      `${VARIABLE}: Fn::GetAtt Table.Bogus: AWS::DynamoDB::Table provides no attribute Bogus locally (it provides Arn, StreamArn)`,
    );
    expect(refusal(set({ Ref: 'Nowhere' }))).toBe(
      `${VARIABLE}: Nowhere is no resource or parameter of the template`,
    );
    expect(refusal(set({ Ref: 'BootstrapVersion' }))).toMatch(
      new RegExp(`^${VARIABLE}: Ref BootstrapVersion: asserts the CDK bootstrap stack's version`),
    );
    expect(refusal(set({ Ref: 'AWS::NotificationARNs' }))).toBe(
      `${VARIABLE}: Ref AWS::NotificationARNs: pseudo parameter not supported by the local runtime`,
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Fn::Sub's syntax
    expect(refusal(set({ 'Fn::Sub': '${Table.Bogus}' }))).toMatch(/Fn::GetAtt Table.Bogus/);
  });

  it('code other than an asset, a runtime other than Node.js', () => {
    expect(refusal((t) => (t.Resources.Function.Properties.Code = { ZipFile: 'exports.handler = 1' }))).toBe(
      'Resources.Function.Properties.Code: only an asset (S3Bucket, S3Key) is supported by the local runtime, the template gives ZipFile',
    );
    expect(refusal((t) => (t.Resources.Function.Properties.Runtime = 'python3.12'))).toBe(
      'Resources.Function.Properties.Runtime: python3.12 is not supported (Node.js only)',
    );
  });

  it('an explicit name longer than the service allows', () => {
    expect(refusal((t) => (t.Resources.Table.Properties.TableName = 'x'.repeat(256)))).toBe(
      `Resources.Table.Properties.TableName: ${'x'.repeat(256)} is longer than 255 characters`,
    );
  });

  it('a Region or account other than the one the template was synthesized for', () => {
    expect(refusal(() => {}, { region: 'us-east-1' })).toBe(
      `stack ${STACK} was synthesized for region eu-west-1, which its template names in literal ARNs: deploy it locally with region eu-west-1, or synthesize for us-east-1`,
    );
    expect(refusal(() => {}, { account: '000000000000' })).toMatch(/synthesized for account 111122223333/);
  });
});

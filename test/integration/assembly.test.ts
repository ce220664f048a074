import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STACK_OUTPUTS } from '../../contract/stack-outputs.js';
import { DEFAULT_MODES } from '../../contract/topology.js';
import {
  type AssemblyDeployment,
  deployAssembly,
  operatorPolicy,
} from '../../harness/environments/assembly/deploy.js';
import { denialLine } from '../../harness/environments/assembly/iam/evaluate.js';
import type { PolicyDocument } from '../../harness/environments/assembly/iam/policy-document.js';
import { synthesizeAssembly } from '../../harness/environments/assembly/synthesize.js';
import { connectDeployedEnvironment } from '../../harness/environments/deployed.js';
import { redriveWithMoveTask } from '../../harness/environments/redrive.js';
import type { SharedDynamoDb } from '../../harness/local-aws/emulators/dynamodb-emulator.js';
import { violations } from '../../harness/report/violations.js';
import { newRunId, runExperiment } from '../../harness/run/experiment.js';
import { experimentConfig } from '../support/embedded-run.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

/**
 * What `cdk deploy` ships, run: one `cdk synth` (the CLI, this project's app), deployed to the
 * local runtime from the assembly alone and driven by the deployed driver; then copies of it,
 * each with one mutation that the template's own IAM must refuse, with the statement named.
 * Short timeouts and a low maxReceiveCount come from context keys the stack reads.
 */
let assembly: string;
let dynamodb: SharedDynamoDb;
const scratch: string[] = [];

beforeAll(async () => {
  dynamodb = await sharedDynamoDb(import.meta.filename);
  assembly = temporary('assembly');
  await synthesizeAssembly(assembly, { crashRate: '0', functionTimeoutSeconds: '1', maxReceiveCount: '2' });
}, 120_000);

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

function temporary(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `assembly-test-${name}-`));
  scratch.push(dir);
  return dir;
}

/** A copy of the assembly with `edit` applied to its template (and, if given, to its code). */
function mutated(
  name: string,
  edit: (template: Template) => void,
  editCode?: (code: string) => string,
): string {
  const copy = temporary(name);
  cpSync(assembly, copy, { recursive: true });
  const file = join(copy, 'DeliverySemantics.template.json');
  const template = JSON.parse(readFileSync(file, 'utf8')) as Template;
  edit(template);
  writeFileSync(file, JSON.stringify(template));
  if (editCode) {
    const asset = assetOf(template, 'EffectivelyOnceFunction');
    const bundle = join(copy, asset, 'index.mjs');
    const before = readFileSync(bundle, 'utf8');
    const after = editCode(before);
    expect(after, 'the code edit applies').not.toBe(before);
    writeFileSync(bundle, after);
  }
  return copy;
}

type Template = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

function resourceOf(template: Template, type: string, prefix: string) {
  const entry = Object.entries(template.Resources).find(
    ([id, r]) => r.Type === type && id.startsWith(prefix),
  );
  if (!entry) throw new Error(`no ${type} ${prefix}*`);
  return entry[1];
}

function statementsOf(template: Template, rolePrefix: string): Array<Record<string, unknown>> {
  const policy = resourceOf(template, 'AWS::IAM::Policy', `${rolePrefix}FunctionRoleDefaultPolicy`);
  return (policy.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement;
}

function assetOf(template: Template, functionPrefix: string): string {
  const fn = resourceOf(template, 'AWS::Lambda::Function', functionPrefix);
  const key = (fn.Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
  const folder = readdirSync(assembly).find((entry) => entry === `asset.${key}`);
  if (!folder) throw new Error(`no asset folder for ${key}`);
  return folder;
}

async function deploy(dir: string, operator?: PolicyDocument): Promise<AssemblyDeployment> {
  return deployAssembly({ assemblyDir: dir, dynamodb, ...(operator ? { operatorPolicy: operator } : {}) });
}

function clientsOf(deployment: AssemblyDeployment, endpoint = deployment.endpoint) {
  const config = { region: deployment.region, endpoint, credentials: deployment.operator, maxAttempts: 1 };
  return {
    cloudFormation: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    sqs: new SQSClient(config),
    dynamodb: new DynamoDBClient(config),
  };
}

async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the synthesized assembly on the local runtime', () => {
  it('is what the CLI synthesizes, offline: every handler bundled with local esbuild, cdk-nag run, the default modes', () => {
    const template = JSON.parse(readFileSync(join(assembly, 'DeliverySemantics.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
      Outputs: Record<string, { Value: unknown }>;
    };
    const count = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type).length;
    // Each default mode with its queue pair, consumer, mapping and DLQ alarm; the verifier; no
    // payment provider (no charge mode), no outbox relay (not asked).
    expect(count('AWS::SQS::Queue')).toBe(2 * DEFAULT_MODES.length);
    expect(count('AWS::Lambda::Function')).toBe(DEFAULT_MODES.length + 1);
    expect(count('AWS::Lambda::EventSourceMapping')).toBe(DEFAULT_MODES.length);
    expect(count('AWS::DynamoDB::Table')).toBe(2);
    expect(count('AWS::CloudWatch::Alarm')).toBe(DEFAULT_MODES.length);
    expect(count('AWS::SNS::Topic')).toBe(1);
    expect(template.Outputs[STACK_OUTPUTS.deployedModes]?.Value).toBe(DEFAULT_MODES.join(','));
    // Every function's code is a bundle in the assembly (esbuild ran; no Docker).
    for (const folder of readdirSync(assembly).filter((entry) => entry.startsWith('asset.'))) {
      expect(readdirSync(join(assembly, folder))).toContain('index.mjs');
    }
  });

  it('runs the default four modes, driven by the deployed driver under the operator policy: exact, 0 denials, counted by its own verifier', async () => {
    const deployment = await deploy(assembly);
    try {
      const env = await connectDeployedEnvironment(
        {
          target: 'aws',
          stackName: 'DeliverySemantics',
          modes: DEFAULT_MODES,
          drainPolicy: { pollMs: 250, stablePolls: 4 },
        },
        clientsOf(deployment),
      );
      const report = await runExperiment(env, experimentConfig({ messages: 10 }), newRunId('assembly'), {
        phase: () => undefined,
      });
      await env.stop();
      // The default run's verdicts: each mode's promise (a loaded machine may time an invocation
      // out, which at-most-once may lose and at-least-once may duplicate), effectively-once exact.
      for (const mode of DEFAULT_MODES) {
        const outcome = report.modes[mode];
        expect(outcome?.produced, mode).toBe(10);
        if (outcome) expect([...violations(mode, outcome)], mode).toEqual([]);
      }
      expect(report.modes['effectively-once']).toMatchObject({ appliedOnce: 10, duplicated: 0, lost: 0 });
      expect(deployment.denials).toEqual([]);
      const verifier = deployment.functionNamed(deployment.stack.outputs.VerifierFunctionName as string);
      expect(verifier?.stats.invocations).toBeGreaterThanOrEqual(1);
    } finally {
      await deployment.stop();
    }
  }, 90_000);

  it('denies a plain-HTTP request by the queue policy, and a request signed with another secret', async () => {
    const deployment = await deploy(assembly);
    try {
      const queueUrl = deployment.stack.outputs.AtLeastOnceQueueUrl as string;
      const plain = clientsOf(deployment, deployment.plainHttpEndpoint).sqs;
      await expect(
        plain.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{}' })),
      ).rejects.toThrow(
        /not authorized to perform: sqs:SendMessage .* explicit deny in a resource-based policy/,
      );
      expect(deployment.denials.map((denial) => denial.statement)).toEqual([
        expect.stringMatching(
          /resource policy of arn:aws:sqs:us-east-1:000000000000:DeliverySemantics-AtLeastOnceQueue/,
        ),
      ]);
      const forged = new SQSClient({
        region: deployment.region,
        endpoint: deployment.endpoint,
        credentials: { accessKeyId: deployment.operator.accessKeyId, secretAccessKey: 'not-the-secret' },
        maxAttempts: 1,
      });
      await expect(
        forged.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] })),
      ).rejects.toThrow(/signature we calculated does not match/);
    } finally {
      await deployment.stop();
    }
  }, 60_000);
});

describe('mutations the template’s IAM must refuse', () => {
  it('one grant removed: effectively-once cannot write, refused naming the policy', async () => {
    const dir = mutated('grant-removed', (template) => {
      const statements = statementsOf(template, 'EffectivelyOnce');
      const kept = statements.filter((statement) => statement.Sid !== 'WriteOwnModePartitionOnly');
      expect(kept).toHaveLength(statements.length - 1);
      statements.splice(0, statements.length, ...kept);
    });
    const deployment = await deploy(dir);
    try {
      // That the message then dead-letters in seconds (-c maxReceiveCount=2) is assembly-all.test.ts's (soak).
      const denials = await firstDenialsOf(deployment, 'grant');
      expect(denials[0]).toMatchObject({
        allowed: false,
        action: expect.stringMatching(/^dynamodb:(UpdateItem|PutItem)$/),
        reason: 'no statement allows it',
      });
      // The line names the policy that no longer allows it.
      expect(denialLine(denials[0] as never)).toMatch(
        /no statement allows it in EffectivelyOnceFunctionRoleDefaultPolicy\w+$/,
      );
    } finally {
      await deployment.stop();
    }
  }, 60_000);

  it('a handler writing a partition its policy omits: denied by WriteOwnModePartitionOnly', async () => {
    const dir = mutated(
      'foreign-partition',
      () => undefined,
      (code) => code.replace('#MODE#${', '#MODE#other-${'),
    );
    const deployment = await deploy(dir);
    try {
      const denials = await firstDenialsOf(deployment, 'partition');
      expect(denials[0]).toMatchObject({
        reason: 'no statement allows it',
        statement: expect.stringContaining('WriteOwnModePartitionOnly'),
      });
    } finally {
      await deployment.stop();
    }
  }, 60_000);

  it('the Deny’s condition dropped: Lambda refuses the mapping at create time', async () => {
    const dir = mutated('deny-unconditional', (template) => {
      const deny = statementsOf(template, 'AtLeastOnce').find(
        (statement) => statement.Sid === 'OnlyTheEventSourceMappingDeletes',
      );
      expect(deny).toBeDefined();
      delete deny?.Condition;
    });
    await expect(deploy(dir)).rejects.toThrow(
      /AtLeastOnceFunctionSqsEventSource.*InvalidParameterValueException.*DeleteMessage.*OnlyTheEventSourceMappingDeletes/,
    );
  }, 60_000);

  it('one action removed from the operator policy: the redrive is denied, naming what is missing', async () => {
    const policy = operatorPolicy('us-east-1');
    const redrive = (policy.Statement as Array<Record<string, unknown>>).find(
      (statement) => statement.Sid === 'ProduceWatchAndRedrive',
    );
    expect(redrive).toBeDefined();
    if (redrive)
      redrive.Action = (redrive.Action as string[]).filter((action) => action !== 'sqs:DeleteMessage');
    const deployment = await deploy(assembly, policy);
    try {
      const { sqs } = clientsOf(deployment);
      const dlq = deployment.stack.outputs.AtLeastOnceDeadLetterQueueUrl as string;
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }),
      );
      await expect(redriveWithMoveTask(sqs, Attributes?.QueueArn as string, { pollMs: 100 })).rejects.toThrow(
        /not authorized to perform: sqs:DeleteMessage/,
      );
      expect(deployment.denials).toEqual([
        expect.objectContaining({ action: 'sqs:DeleteMessage', reason: 'no statement allows it' }),
      ]);
      expect(denialLine(deployment.denials[0] as never)).toMatch(
        /^IAM denied operator sqs:DeleteMessage on arn:aws:sqs:.*DeadLetterQueue.*: no statement allows it in operator-policy$/,
      );
    } finally {
      await deployment.stop();
    }
  }, 60_000);
});

/** Sends one event to effectively-once's queue, and waits for the deployment's first denials. */
async function firstDenialsOf(deployment: AssemblyDeployment, eventId: string) {
  await clientsOf(deployment).sqs.send(
    new SendMessageCommand({
      QueueUrl: deployment.stack.outputs.EffectivelyOnceQueueUrl as string,
      MessageBody: body(eventId),
    }),
  );
  return until(
    () => deployment.denials,
    (list) => list.length > 0,
  );
}

function body(eventId: string): string {
  return JSON.stringify({
    eventId,
    runId: 'mutation',
    accountId: 'acct-1',
    amountCents: 100,
    seq: 1,
    createdAt: new Date().toISOString(),
  });
}

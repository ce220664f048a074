import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODE_NAMES, type Mode } from '../../contract/topology.js';
import { type AssemblyDeployment, deployAssembly } from '../../harness/environments/assembly/deploy.js';
import { synthesizeAssembly } from '../../harness/environments/assembly/synthesize.js';
import { connectDeployedEnvironment } from '../../harness/environments/deployed.js';
import { violations } from '../../harness/report/violations.js';
import { newRunId, runExperiment } from '../../harness/run/experiment.js';
import { outboxItem } from '../../services/outbox/outbox.js';
import { runNpmScript } from '../support/cli.js';
import { experimentConfig } from '../support/embedded-run.js';

/**
 * The long runs of the assembly (npm run test:soak): `-c modes=all` through the deployed driver
 * (the charge modes reach the provider through its Function URL, the relay runs through its stream
 * mapping), and `npm run assembly` itself, the driver in its own process.
 */
let assembly: string;

beforeAll(async () => {
  assembly = mkdtempSync(join(tmpdir(), 'assembly-all-'));
  // 6 s: a 2-core machine running every mode's functions at their concurrency of 5 needs it.
  await synthesizeAssembly(assembly, {
    modes: 'all',
    crashRate: '0',
    functionTimeoutSeconds: '6',
    maxReceiveCount: '3',
  });
}, 120_000);

afterAll(() => rmSync(assembly, { recursive: true, force: true }));

function clientsOf(deployment: AssemblyDeployment) {
  const config = {
    region: deployment.region,
    endpoint: deployment.endpoint,
    credentials: deployment.operator,
  };
  return {
    cloudFormation: new CloudFormationClient(config),
    lambda: new LambdaClient({ ...config, maxAttempts: 1 }),
    sqs: new SQSClient(config),
    dynamodb: new DynamoDBClient(config),
  };
}

describe('-c modes=all, from the assembly', () => {
  it('keeps every mode’s promise with 0 denials; the provider answers through its Function URL; the relay runs through its stream mapping', async () => {
    const deployment = await deployAssembly({ assemblyDir: assembly });
    try {
      const env = await connectDeployedEnvironment(
        {
          target: 'aws',
          stackName: 'DeliverySemantics',
          modes: MODE_NAMES,
          drainPolicy: { pollMs: 500, stablePolls: 6 },
        },
        clientsOf(deployment),
      );
      const report = await runExperiment(
        env,
        experimentConfig({ messages: 40, modes: MODE_NAMES }),
        newRunId('all'),
        {
          phase: () => undefined,
        },
      );
      for (const mode of MODE_NAMES) {
        const outcome = report.modes[mode as Mode];
        expect(outcome, mode).toBeDefined();
        if (outcome) expect([...violations(mode, outcome)], mode).toEqual([]);
      }
      expect(deployment.denials).toEqual([]);
      const provider = deployment.functionNamed(
        deployment.stack
          .byType('AWS::Lambda::Function')
          .find((fn) => fn.logicalId.startsWith('PaymentProvider'))?.physicalId ?? '',
      );
      expect(provider?.stats.invocations).toBeGreaterThan(0);

      // The producing service's write: one outbox item; the relay's stream mapping hands it to the
      // relay, which sends it to every mode's queue.
      const relay = deployment.functionNamed(
        deployment.stack.byType('AWS::Lambda::Function').find((fn) => fn.logicalId.startsWith('OutboxRelay'))
          ?.physicalId ?? '',
      );
      const ddb = DynamoDBDocumentClient.from(clientsOf(deployment).dynamodb);
      const runId = 'relay-check';
      await ddb.send(
        new PutCommand({
          TableName: deployment.stack.outputs.OutboxTableName,
          Item: outboxItem({
            runId,
            eventId: 'relay-1',
            accountId: 'acct-1',
            position: 1,
            body: JSON.stringify({
              eventId: 'relay-1',
              runId,
              accountId: 'acct-1',
              amountCents: 100,
              seq: 1,
              createdAt: new Date().toISOString(),
            }),
          }),
        }),
      );
      const deadline = Date.now() + 30_000;
      while ((relay?.stats.invocations ?? 0) === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 250));
      expect(relay?.stats.invocations).toBeGreaterThan(0);
      expect(deployment.denials).toEqual([]);
      await env.stop();
    } finally {
      await deployment.stop();
    }
  }, 400_000);
});

describe('npm run assembly', () => {
  it('synthesizes, deploys and runs the deployed driver in its own process: the default verdicts, 0 denials', async () => {
    const result = await runNpmScript('assembly', ['--', '--messages', '100']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/denials: 0/);
    expect(result.stdout).toMatch(/effectively-once +100 +\d+ +100 +0 \(0\) +0 +0/);
  }, 320_000);
});

describe('a grant removed, with -c maxReceiveCount=2', () => {
  it('dead-letters the message in seconds, every delivery denied naming the policy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'assembly-grant-'));
    try {
      await synthesizeAssembly(dir, { crashRate: '0', functionTimeoutSeconds: '1', maxReceiveCount: '2' });
      const file = join(dir, 'DeliverySemantics.template.json');
      const template = JSON.parse(readFileSync(file, 'utf8')) as {
        Resources: Record<
          string,
          { Type: string; Properties: { PolicyDocument?: { Statement: Array<{ Sid?: string }> } } }
        >;
      };
      const policy = Object.entries(template.Resources).find(
        ([id, r]) =>
          r.Type === 'AWS::IAM::Policy' && id.startsWith('EffectivelyOnceFunctionRoleDefaultPolicy'),
      )?.[1].Properties.PolicyDocument;
      if (!policy) throw new Error('no effectively-once policy');
      policy.Statement = policy.Statement.filter(
        (statement) => statement.Sid !== 'WriteOwnModePartitionOnly',
      );
      writeFileSync(file, JSON.stringify(template));
      const deployment = await deployAssembly({ assemblyDir: dir });
      try {
        const { sqs } = clientsOf(deployment);
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: deployment.stack.outputs.EffectivelyOnceQueueUrl,
            MessageBody: JSON.stringify({
              eventId: 'grant',
              runId: 'mutation',
              accountId: 'acct-1',
              amountCents: 100,
              seq: 1,
              createdAt: new Date().toISOString(),
            }),
          }),
        );
        const dlq = deployment.stack.outputs.EffectivelyOnceDeadLetterQueueUrl;
        let depth = '0';
        for (const deadline = Date.now() + 30_000; depth !== '1' && Date.now() < deadline; ) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          const { Attributes } = await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['ApproximateNumberOfMessages'] }),
          );
          depth = Attributes?.ApproximateNumberOfMessages ?? '0';
        }
        expect(depth).toBe('1');
        expect(deployment.denials.length).toBeGreaterThanOrEqual(2);
      } finally {
        await deployment.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetFunctionConfigurationCommand, InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { modeOutputs, STACK_OUTPUTS } from '../../contract/stack-outputs.js';
import { DEFAULT_MODES, MODE_NAMES, MODES, type Mode, TOPOLOGY_VERSION } from '../../contract/topology.js';
import { connectDeployedEnvironment, type DeployedClients } from '../../harness/environments/deployed.js';
import { StackVersionError, VerifierInvocationError } from '../../harness/environments/deployed-errors.js';
import { type EmbeddedEnvironment, startEmbeddedEnvironment } from '../../harness/environments/embedded.js';
import { NO_FAULTS } from '../../harness/local-aws/faults/faults.js';
import { newRunId, runExperiment } from '../../harness/run/experiment.js';
import { describeSettings } from '../../harness/run/reconcile.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

/**
 * The deployed environment's real paths — SendMessageBatch, GetQueueAttributes, the manifest write
 * to DynamoDB, the drain wait and the verifier's answer — run against real SQS and DynamoDB
 * emulators. The consumers and the verifier stand in for the deployed Lambdas (the embedded
 * runtime runs the same bundles); CloudFormation and Lambda's control plane are mocked, since
 * there is no AWS account here.
 */
/** The SDK's payload type: bytes that can also render themselves as a string. */
function blob(text: string) {
  return Object.assign(new TextEncoder().encode(text), { transformToString: () => text });
}

/**
 * The modes the whole run drives: one per path of the deployed driver (a standard send, a FIFO
 * send, Powertools' own table), without an environment of prewarmed processes for every mode of
 * the topology, which made this file the suite's slowest (189 s with twelve modes, and the machine
 * too loaded for others). The default run's other two modes add no path, only function
 * processes (each start is about 0.4 CPU-seconds). The stack's outputs still name every mode.
 */
const RUN_MODES: readonly Mode[] = ['effectively-once', 'powertools-idempotency', 'fifo-versioned'];

describe('deployed environment against real SQS and DynamoDB endpoints', () => {
  // Mocked in beforeAll, not at collection: a filtered run that runs no test runs no afterAll
  // either, and the prototypes' stubs would outlive the file in its worker.
  let cloudFormation: AwsClientStub<CloudFormationClient>;
  let lambda: AwsClientStub<LambdaClient>;
  let backing: EmbeddedEnvironment;
  const CRASH_RATE = 0.05;
  /**
   * Several modes in two environments on two cores, beside other test files: the then default 5 s
   * (a 3 s function timeout) let a loaded machine time out the same FIFO batch (ten records of one
   * account, two writes each) receive after receive, until it was dead-lettered between a credit
   * and its record. 8 s (7 s to time out) keeps the run about the consumers, not the machine.
   */
  const VISIBILITY_SECONDS = 8;

  beforeAll(async () => {
    cloudFormation = mockClient(CloudFormationClient);
    lambda = mockClient(LambdaClient);
    backing = await startEmbeddedEnvironment({
      modes: RUN_MODES,
      crashRate: CRASH_RATE,
      crashSeed: 'deployed-it',
      visibilityTimeoutSeconds: VISIBILITY_SECONDS,
      dynamodb: await sharedDynamoDb('deployed-environment'),
    });
  });

  afterAll(async () => {
    cloudFormation?.restore();
    lambda?.restore();
    await backing?.stop();
  });

  function outputs(overrides: Record<string, string | undefined> = {}) {
    const values: Record<string, string | undefined> = {
      [STACK_OUTPUTS.tableName]: backing.tableName,
      [STACK_OUTPUTS.verifierFunctionName]: 'DeliverySemantics-Verifier',
      [STACK_OUTPUTS.crashRate]: String(CRASH_RATE),
      [STACK_OUTPUTS.crashSeed]: 'deployed-it',
      [STACK_OUTPUTS.topologyVersion]: TOPOLOGY_VERSION,
      [STACK_OUTPUTS.deployedModes]: MODE_NAMES.join(','),
    };
    for (const mode of MODE_NAMES) {
      const keys = modeOutputs(mode);
      values[keys.queueUrl] = backing.queueUrl(mode);
      values[keys.deadLetterQueueUrl] = backing.local.deadLetterQueueUrls[mode];
      values[keys.functionName] = `DeliverySemantics-${mode}`;
      values[keys.batchSize] = String(MODES[mode].batchSize);
      values[keys.maxBatchingWindow] = String(MODES[mode].maxBatchingWindowSeconds);
      values[keys.maxConcurrency] = String(MODES[mode].maxConcurrency);
      values[keys.scaling] = `maxConcurrency=${MODES[mode].maxConcurrency}`;
      values[keys.visibilityTimeout] = String(MODES[mode].visibilityTimeoutSeconds);
      values[keys.maxReceiveCount] = String(MODES[mode].maxReceiveCount);
    }
    Object.assign(values, overrides);
    return Object.entries(values)
      .filter(([, value]) => value !== undefined)
      .map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
  }

  function clients(): DeployedClients {
    const config = {
      region: backing.local.region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    };
    return {
      cloudFormation: new CloudFormationClient(config),
      lambda: new LambdaClient(config),
      sqs: new SQSClient({ ...config, endpoint: backing.local.sqsEndpoint }),
      dynamodb: new DynamoDBClient({ ...config, endpoint: backing.local.dynamodbEndpoint }),
    };
  }

  beforeEach(() => {
    cloudFormation.reset();
    lambda.reset();
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        { StackName: 'X', CreationTime: new Date(), StackStatus: 'CREATE_COMPLETE', Outputs: outputs() },
      ],
    });
    lambda
      .on(GetFunctionConfigurationCommand)
      .resolves({ Timeout: 30, Environment: { Variables: { CRASH_RATE: String(CRASH_RATE) } } });
    lambda.on(InvokeCommand).callsFake(async (input: { Payload: Uint8Array }) => {
      const { runId, modes, ...options } = JSON.parse(new TextDecoder().decode(input.Payload));
      const { result } = await backing.invokeVerifier(runId, modes, options);
      const report =
        'REPORT RequestId: x Duration: 812.3 ms Billed Duration: 813 ms Memory Size: 1024 MB Max Memory Used: 91 MB';
      return {
        StatusCode: 200,
        Payload: blob(JSON.stringify(result)),
        LogResult: Buffer.from(report).toString('base64'),
      };
    });
  });

  it('runs the whole experiment through the deployed driver: produce, drain, verify', async () => {
    const env = await connectDeployedEnvironment(
      {
        target: 'aws',
        stackName: 'DeliverySemantics',
        modes: MODE_NAMES,
        region: 'us-east-1',
        drainPolicy: { pollMs: 250, stablePolls: 4 },
      },
      clients(),
    );
    expect(env.description).toMatchObject({ target: 'aws', crashRate: CRASH_RATE, crashSeed: 'deployed-it' });
    expect(env.description.modes['at-least-once']).toMatchObject({
      batchSize: 10,
      maxConcurrency: 5,
      functionTimeoutSeconds: 30,
    });

    const config = {
      messages: 120,
      accounts: 5,
      crashRate: CRASH_RATE,
      batchSize: 10,
      seed: 'deployed-run',
      modes: RUN_MODES,
      concurrency: undefined,
      visibilityTimeoutSeconds: VISIBILITY_SECONDS,
      faults: NO_FAULTS,
    };
    const report = await runExperiment(env, config, newRunId('deployed-run'), { phase: () => undefined });
    await env.stop();

    expect(report.target).toBe('aws');
    expect(report.memory.verifierPeakRssKb).toBe(91 * 1024);
    expect(report.modes['effectively-once']).toMatchObject({
      appliedOnce: 120,
      lost: 0,
      duplicated: 0,
      driftCents: 0,
    });
    for (const mode of RUN_MODES) {
      expect(report.modes[mode]?.produced).toBe(120);
      // On failure: the outcome, and the backing runtime's timeouts and crashes (the report has none).
      const { events: _, ...outcome } = report.modes[mode] ?? {};
      const { timeouts, crashes, deliveries } = backing.liveStats?.(mode) ?? {};
      expect(
        report.modes[mode]?.consistent,
        `${mode} consistent: ${JSON.stringify({ outcome, runtime: { timeouts, crashes, deliveries } })}`,
      ).toBe(true);
      // The deployed environment cannot see the consumers' processes: no runtime section.
      expect(report.modes[mode]?.runtime).toBeUndefined();
    }
    const invoked = lambda.commandCalls(InvokeCommand)[0]?.args[0].input;
    expect(invoked?.FunctionName).toBe('DeliverySemantics-Verifier');
    expect(invoked?.LogType).toBe('Tail');
    // A small run asks for every event's outcome, in the Invoke payload: the same page as embedded.
    const payload = invoked?.Payload;
    if (!(payload instanceof Uint8Array)) throw new Error('the verifier was invoked without a byte payload');
    expect(JSON.parse(new TextDecoder().decode(payload))).toMatchObject({ events: true });
    expect(report.manifest?.eventIds).toHaveLength(120);
    for (const mode of RUN_MODES) expect(report.modes[mode]?.events?.states).toHaveLength(120);
    expect(report.modes['effectively-once']?.events?.states).toBe('o'.repeat(120));
  });

  it('refuses a stack deployed from another version of the project', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'X',
          CreationTime: new Date(),
          StackStatus: 'CREATE_COMPLETE',
          Outputs: outputs({ [STACK_OUTPUTS.topologyVersion]: '0' }),
        },
      ],
    });
    await expect(
      connectDeployedEnvironment(
        { target: 'aws', stackName: 'Old', modes: MODE_NAMES, region: 'us-east-1' },
        clients(),
      ),
    ).rejects.toThrow(StackVersionError);
  });

  it('refuses a stack whose outputs lack what this version needs', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'X',
          CreationTime: new Date(),
          StackStatus: 'CREATE_COMPLETE',
          Outputs: outputs({ [modeOutputs('at-most-once').queueUrl]: undefined }),
        },
      ],
    });
    await expect(
      connectDeployedEnvironment(
        { target: 'aws', stackName: 'Partial', modes: MODE_NAMES, region: 'us-east-1' },
        clients(),
      ),
    ).rejects.toThrow(/has no output AtMostOnceQueueUrl/);
  });

  /** The stack's outputs as `npx cdk deploy -c modes=…` leaves them: only those modes'. */
  function stackWith(modes: readonly Mode[], overrides: Record<string, string | undefined> = {}) {
    const others = Object.fromEntries(
      MODE_NAMES.filter((mode) => !modes.includes(mode)).flatMap((mode) =>
        Object.values(modeOutputs(mode)).map((key) => [key, undefined]),
      ),
    );
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'X',
          CreationTime: new Date(),
          StackStatus: 'CREATE_COMPLETE',
          Outputs: outputs({ ...others, [STACK_OUTPUTS.deployedModes]: modes.join(','), ...overrides }),
        },
      ],
    });
  }

  it('refuses a mode the stack does not deploy, naming the context to redeploy with', async () => {
    stackWith(DEFAULT_MODES);
    const connect = (target: 'aws' | 'localstack') =>
      connectDeployedEnvironment(
        { target, stackName: 'DeliverySemantics', modes: ['charge-with-key'], region: 'us-east-1' },
        clients(),
      );
    await expect(connect('aws')).rejects.toThrow(StackVersionError);
    await expect(connect('aws')).rejects.toThrow(
      `stack DeliverySemantics does not deploy charge-with-key: it deploys ${DEFAULT_MODES.join(', ')}. ` +
        'Redeploy it with them (`npx cdk deploy -c stackName=DeliverySemantics -c crashRate=0.05 -c crashSeed=deployed-it ' +
        `-c modes=${[...DEFAULT_MODES, 'charge-with-key'].join(',')}\`, plus any alarmEmail, markerRetentionDays, ` +
        `batchSize, maxReceiveCount or providerLostResponseRate you deployed it with), or run --modes ${DEFAULT_MODES.join(',')}.`,
    );
    await expect(connect('localstack')).rejects.toThrow(
      `(\`npm run deploy:local -- -c crashRate=0.05 -c crashSeed=deployed-it -c modes=${[...DEFAULT_MODES, 'charge-with-key'].join(',')}\``,
    );
    // Refused before any function was read.
    expect(lambda.commandCalls(GetFunctionConfigurationCommand)).toHaveLength(0);
  });

  it("reads the run's modes only, and without --modes (a redrive) runs those the stack deploys", async () => {
    stackWith(['at-least-once', 'effectively-once']);
    const asked = await connectDeployedEnvironment(
      { target: 'aws', stackName: 'Narrow', modes: ['effectively-once'], region: 'us-east-1' },
      clients(),
    );
    expect(asked.modes).toEqual(['effectively-once']);
    expect(lambda.commandCalls(GetFunctionConfigurationCommand)).toHaveLength(1);
    await asked.stop();
    const unasked = await connectDeployedEnvironment(
      { target: 'aws', stackName: 'Narrow', modes: MODE_NAMES, modesFromStack: true, region: 'us-east-1' },
      clients(),
    );
    expect(unasked.modes).toEqual(['at-least-once', 'effectively-once']);
    // A --crash-rate or --batch-size that contradicts the stack is refused with this command: the
    // change asked for, and what the outputs show kept (the modes, not the default ones).
    expect(unasked.redeployCommand?.({ crashRate: 0.1, batchSize: 5 })).toBe(
      '`npx cdk deploy -c stackName=Narrow -c crashRate=0.1 -c crashSeed=deployed-it -c batchSize=5 ' +
        '-c modes=at-least-once,effectively-once`, plus any alarmEmail, markerRetentionDays, maxReceiveCount or providerLostResponseRate you deployed it with',
    );
    await unasked.stop();
  });

  it('takes a mode scaled by provisioned pollers, which has no maximum concurrency output', async () => {
    const keys = modeOutputs('effectively-once');
    stackWith(['effectively-once'], {
      [keys.maxConcurrency]: undefined,
      [keys.scaling]: 'provisionedPollers=2:10',
    });
    const env = await connectDeployedEnvironment(
      { target: 'aws', stackName: 'Provisioned', modes: ['effectively-once'], region: 'us-east-1' },
      clients(),
    );
    // Each poller invokes up to 10 batches at once: the report says so, not "concurrency 10".
    expect(env.description.modes['effectively-once']).toMatchObject({
      maxConcurrency: 100,
      provisionedPollers: { minimumPollers: 2, maximumPollers: 10 },
    });
    expect(describeSettings(env.description)).toContain('concurrency up to 100 (pollers 2–10)');
    await env.stop();
  });

  it('refuses a function whose crash rate was changed outside CDK', async () => {
    lambda
      .on(GetFunctionConfigurationCommand)
      .resolves({ Timeout: 30, Environment: { Variables: { CRASH_RATE: '0.5' } } });
    await expect(
      connectDeployedEnvironment(
        { target: 'aws', stackName: 'Edited', modes: MODE_NAMES, region: 'us-east-1' },
        clients(),
      ),
    ).rejects.toThrow(/changed outside CDK/);
  });

  it('reports a failed verifier invocation with its error payload', async () => {
    lambda.on(InvokeCommand).resolves({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: blob('{"errorType":"RunNotFoundError","errorMessage":"no manifest"}'),
    });
    const env = await connectDeployedEnvironment(
      { target: 'aws', stackName: 'DeliverySemantics', modes: MODE_NAMES, region: 'us-east-1' },
      clients(),
    );
    await expect(env.invokeVerifier('missing-run', MODE_NAMES)).rejects.toThrow(VerifierInvocationError);
    await expect(env.invokeVerifier('missing-run', MODE_NAMES)).rejects.toThrow(/RunNotFoundError/);
    await env.stop();
  });
});

import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetFunctionConfigurationCommand,
  InvokeCommand,
  type InvokeCommandOutput,
  LambdaClient,
} from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { modeOutputs, pollersOfScaling, STACK_OUTPUTS } from '../../contract/stack-outputs.js';
import { MODE_NAMES, type Mode, TOPOLOGY_VERSION } from '../../contract/topology.js';
import type { VerifierResult } from '../../verifier/verifier.js';
import {
  DeployedEnvironmentError,
  explainAwsError,
  RedriveUnsupportedError,
  StackVersionError,
  VerifierInvocationError,
} from './deployed-errors.js';
import {
  type EffectiveModeSettings,
  type ExperimentEnvironment,
  INVOKES_PER_POLLER,
  type VerifierInvocation,
} from './environment.js';
import { LOCALSTACK_DEFAULTS } from './localstack-defaults.js';
import { readQueueDepth } from './queue-depth.js';
import { redeployCommand } from './redeploy-command.js';
import { type MoveTaskOptions, redriveWithMoveTask } from './redrive.js';

export interface DeployedOptions {
  readonly target: 'aws' | 'localstack';
  readonly stackName: string;
  readonly modes: readonly Mode[];
  /**
   * Run those of `modes` the stack deploys (its `-c modes`) instead of refusing the others: a
   * redrive without --modes redrives whatever the stack has.
   * @default false: a mode the stack lacks is an error that names the context to redeploy with
   */
  readonly modesFromStack?: boolean;
  /** Defaults to the SDK's (AWS_REGION, profile); LocalStack defaults to us-east-1. */
  readonly region?: string;
  /** LocalStack's endpoint; unset for AWS. */
  readonly endpoint?: string;
  readonly onStatus?: (message: string) => void;
  /** Overrides the drain policy derived from the deployment (tests use a short one). */
  readonly drainPolicy?: ExperimentEnvironment['drainPolicy'];
  /** How the redrive's move task is polled (tests poll fast). */
  readonly moveTask?: MoveTaskOptions;
}

/** Injectable for tests; built from the options otherwise. */
export interface DeployedClients {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
}

export function createDeployedClients(options: DeployedOptions): DeployedClients {
  const local = options.target === 'localstack';
  const region = options.region ?? (local ? LOCALSTACK_DEFAULTS.region : undefined);
  const config = {
    ...(region ? { region } : {}),
    ...(local
      ? {
          endpoint: options.endpoint ?? LOCALSTACK_DEFAULTS.endpoint,
          credentials: LOCALSTACK_DEFAULTS.credentials,
        }
      : {}),
    // Fail fast instead of retrying for minutes when something is misconfigured.
    maxAttempts: 3,
  };
  return {
    cloudFormation: new CloudFormationClient(config),
    // Never retry an Invoke: a retried verifier would overlap the first one's DLQ sweep.
    lambda: new LambdaClient({ ...config, maxAttempts: 1 }),
    sqs: new SQSClient(config),
    dynamodb: new DynamoDBClient(config),
  };
}

/** How long the driver must see a queue empty before calling it drained, given the deployment. */
export function deployedDrainPolicy(modes: Readonly<Record<string, EffectiveModeSettings>>) {
  const longestFunction = Math.max(...Object.values(modes).map((mode) => mode.functionTimeoutSeconds));
  const pollMs = 5000;
  // SQS's approximate counters settle within about a minute, and an at-most-once invocation keeps
  // working after its delete for up to the function timeout: stay empty for both before trusting it.
  return { pollMs, stablePolls: Math.ceil((Math.max(60, longestFunction + 15) * 1000) / pollMs) };
}

/**
 * A deployed stack — in an AWS account, or in LocalStack — read from its CloudFormation outputs.
 * The driver produces with SQS, reads queue depths, and invokes the deployed verifier Lambda.
 */
export async function connectDeployedEnvironment(
  options: DeployedOptions,
  clients: DeployedClients = createDeployedClients(options),
): Promise<ExperimentEnvironment> {
  const status = options.onStatus ?? (() => undefined);
  const region = options.region ?? (await clients.cloudFormation.config.region());
  const explain = (error: unknown) =>
    explainAwsError(error, {
      target: options.target,
      stackName: options.stackName,
      region,
      ...(options.endpoint !== undefined || options.target === 'localstack'
        ? { endpoint: options.endpoint ?? LOCALSTACK_DEFAULTS.endpoint }
        : {}),
    });
  try {
    status(
      `reading stack ${options.stackName} in ${region}${options.target === 'localstack' ? ' (LocalStack)' : ''}`,
    );
    const { Stacks = [] } = await clients.cloudFormation.send(
      new DescribeStacksCommand({ StackName: options.stackName }),
    );
    const outputs = new Map(
      (Stacks[0]?.Outputs ?? []).map((output) => [output.OutputKey ?? '', output.OutputValue ?? '']),
    );
    const redeploy = redeployCommand(options, outputs);
    const output = (key: string): string => {
      const value = outputs.get(key);
      if (value === undefined || value === '') {
        throw new StackVersionError(
          `stack ${options.stackName} has no output ${key}: it was deployed from another version of this project. ` +
            `Redeploy it from this checkout (${redeploy}).`,
        );
      }
      return value;
    };
    const version = outputs.get(STACK_OUTPUTS.topologyVersion);
    if (version !== TOPOLOGY_VERSION) {
      throw new StackVersionError(
        `stack ${options.stackName} was deployed from another version of this project (topology ${version ?? 'unknown'}, ` +
          `this checkout expects ${TOPOLOGY_VERSION}). Redeploy it from this checkout (${redeploy}).`,
      );
    }

    const crashRate = Number(output(STACK_OUTPUTS.crashRate));
    const crashSeed = output(STACK_OUTPUTS.crashSeed);
    const deployed = output(STACK_OUTPUTS.deployedModes).split(',');
    const runModes = options.modesFromStack
      ? options.modes.filter((mode) => deployed.includes(mode))
      : options.modes;
    const missing = (runModes.length > 0 ? runModes : options.modes).filter(
      (mode) => !deployed.includes(mode),
    );
    if (missing.length > 0) {
      const wanted = MODE_NAMES.filter((mode) => deployed.includes(mode) || missing.includes(mode));
      throw new StackVersionError(
        `stack ${options.stackName} does not deploy ${missing.join(', ')}: it deploys ${deployed.join(', ')}. ` +
          `Redeploy it with them (${redeployCommand(options, outputs, { modes: wanted })}), or run --modes ${deployed.join(',')}.`,
      );
    }
    // The run's modes only. Their functions' own configuration is the truth about what runs (a hand
    // edit would show here).
    const configurations = await Promise.all(
      runModes.map((mode) =>
        clients.lambda.send(
          new GetFunctionConfigurationCommand({ FunctionName: output(modeOutputs(mode).functionName) }),
        ),
      ),
    );
    const modes = {} as Record<Mode, EffectiveModeSettings>;
    const queueUrls = {} as Record<Mode, string>;
    const deadLetterQueueUrls = {} as Record<Mode, string>;
    for (const [index, mode] of runModes.entries()) {
      const keys = modeOutputs(mode);
      const configuration = configurations[index];
      const deployedRate = configuration?.Environment?.Variables?.CRASH_RATE;
      if (Number(deployedRate) !== crashRate) {
        throw new StackVersionError(
          `${output(keys.functionName)} runs with CRASH_RATE=${deployedRate}, but the stack says ` +
            `${crashRate}: it was changed outside CDK. Redeploy it from this checkout (${redeploy}).`,
        );
      }
      queueUrls[mode] = output(keys.queueUrl);
      deadLetterQueueUrls[mode] = output(keys.deadLetterQueueUrl);
      // Provisioned pollers replace maximum concurrency (`-c provisionedPollers`): then each
      // poller invokes up to 10 batches at once (Lambda's guide to SQS scaling).
      const pollers = pollersOfScaling(output(keys.scaling));
      modes[mode] = {
        batchSize: Number(output(keys.batchSize)),
        maxBatchingWindowSeconds: Number(output(keys.maxBatchingWindow)),
        maxConcurrency:
          pollers === undefined
            ? Number(output(keys.maxConcurrency))
            : pollers.maximumPollers * INVOKES_PER_POLLER,
        ...(pollers !== undefined ? { provisionedPollers: pollers } : {}),
        visibilityTimeoutSeconds: Number(output(keys.visibilityTimeout)),
        functionTimeoutSeconds: configuration?.Timeout ?? 0,
        maxReceiveCount: Number(output(keys.maxReceiveCount)),
      };
    }
    const tableName = output(STACK_OUTPUTS.tableName);
    const verifierName = output(STACK_OUTPUTS.verifierFunctionName);
    const ddb = DynamoDBDocumentClient.from(clients.dynamodb);

    const environment: ExperimentEnvironment = {
      description: { target: options.target, crashRate, crashSeed, modes },
      redeployCommand: (changes) => redeployCommand(options, outputs, changes),
      modes: runModes,
      sqs: clients.sqs,
      ddb,
      tableName,
      drainPolicy: options.drainPolicy ?? deployedDrainPolicy(modes),
      queueUrl: (mode) => queueUrls[mode],
      queueDepth: async (mode) => {
        try {
          return await readQueueDepth(clients.sqs, queueUrls[mode]);
        } catch (error) {
          throw explain(error);
        }
      },
      deadLetterQueueDepth: async (mode) => {
        try {
          return await readQueueDepth(clients.sqs, deadLetterQueueUrls[mode]);
        } catch (error) {
          throw explain(error);
        }
      },
      redrive: async (mode) => {
        try {
          const { Attributes } = await clients.sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: deadLetterQueueUrls[mode],
              AttributeNames: ['QueueArn'],
            }),
          );
          const arn = Attributes?.QueueArn;
          if (!arn) throw new Error(`SQS returned no QueueArn for ${deadLetterQueueUrls[mode]}`);
          return await redriveWithMoveTask(clients.sqs, arn, options.moveTask);
        } catch (error) {
          const explained = explainRedriveError(error, options.target, options.endpoint);
          throw explained === error ? explain(error) : explained;
        }
      },
      invokeVerifier: async (runId, verifyModes, verifierOptions = {}): Promise<VerifierInvocation> => {
        let response: InvokeCommandOutput;
        try {
          response = await clients.lambda.send(
            new InvokeCommand({
              FunctionName: verifierName,
              Payload: new TextEncoder().encode(
                JSON.stringify({ runId, modes: verifyModes, ...verifierOptions }),
              ),
              LogType: 'Tail',
            }),
          );
        } catch (error) {
          throw explain(error);
        }
        const payload = response.Payload ? new TextDecoder().decode(response.Payload) : '';
        if (response.FunctionError) {
          throw new VerifierInvocationError(
            `the verifier ${verifierName} failed (${response.FunctionError}): ${payload}`,
          );
        }
        const peakRssKb = maxMemoryUsedKb(response.LogResult);
        return {
          result: JSON.parse(payload) as VerifierResult,
          ...(peakRssKb !== undefined ? { peakRssKb } : {}),
        };
      },
      stop: async () => {
        for (const client of Object.values(clients)) client.destroy();
      },
    };
    return environment;
  } catch (error) {
    for (const client of Object.values(clients)) client.destroy();
    if (error instanceof DeployedEnvironmentError) throw error;
    throw explain(error);
  }
}

/** Lambda's REPORT line (in the tail log of a synchronous invoke) says "Max Memory Used: 85 MB". */
export function maxMemoryUsedKb(logResult: string | undefined): number | undefined {
  if (!logResult) return undefined;
  const match = /Max Memory Used: (\d+) MB/.exec(Buffer.from(logResult, 'base64').toString('utf8'));
  return match?.[1] ? Number(match[1]) * 1024 : undefined;
}

/**
 * An endpoint that does not know StartMessageMoveTask (an old LocalStack, another emulator) says so
 * plainly; anything else is explained like every other call to the deployment.
 */
export function explainRedriveError(
  error: unknown,
  target: 'aws' | 'localstack',
  endpoint?: string,
): unknown {
  if (!(error instanceof Error)) return error;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  // On AWS, UnsupportedOperation is a documented StartMessageMoveTask refusal of this request (e.g.
  // a source that is not a DLQ): it is SQS's answer, not a missing API. Only an emulator lacks the call.
  const missingCall =
    /InvalidAction|NotImplemented|UnknownOperation/i.test(error.name) ||
    /not (yet )?implemented/i.test(error.message) ||
    status === 501 ||
    (target === 'localstack' &&
      (/UnsupportedOperation/i.test(error.name) || /not (yet )?supported/i.test(error.message)));
  if (missingCall) {
    return new RedriveUnsupportedError(
      `--redrive needs SQS's StartMessageMoveTask and ListMessageMoveTasks, which ${
        target === 'localstack'
          ? `the LocalStack at ${endpoint ?? LOCALSTACK_DEFAULTS.endpoint}`
          : 'this endpoint'
      } does not support (${error.name}: ${error.message}). LocalStack 4.14.0, which localstack/README.md pins, does; ` +
        'upgrade it, or move the messages back from the SQS console ("Start DLQ redrive").',
    );
  }
  return error;
}

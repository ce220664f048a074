import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PROJECT_ROOT } from '../../../stack/bundling.js';
import {
  reserveLoopbackPort,
  type SharedDynamoDb,
  startDynamoDbEmulator,
} from '../../local-aws/emulators/dynamodb-emulator.js';
import { startSqsEmulator } from '../../local-aws/emulators/sqs-emulator.js';
import type { LocalFunction } from '../../local-aws/lambda-runtime/local-function.js';
import { Teardown } from '../teardown.js';
import { type AlarmState, localAlarmsOf, watchAlarms } from './alarms.js';
import { readCloudAssembly } from './cloud-assembly.js';
import { MoveTasks } from './control-plane.js';
import { startGateway } from './gateway/gateway.js';
import { type Handlers, handlers } from './gateway-handlers.js';
import { type Decision, denialLine } from './iam/evaluate.js';
import type { PolicyDocument } from './iam/policy-document.js';
import type { ResourceDirectory } from './iam/service-call.js';
import { startFunctions } from './local-functions.js';
import { createMappings } from './local-mappings.js';
import { LOCAL_ACCOUNT } from './locality.js';
import { type Caller, type Credentials, Principals } from './principals.js';
import { createQueue, createTable, queuesInCreationOrder } from './provision.js';
import { type ResolvedStack, resolveStack } from './resolve-stack.js';
import { queuePolicies, queueWhere, refuseWhatIsNotModelled, resourceDirectory } from './stack-index.js';

export { LOCAL_ACCOUNT } from './locality.js';
export const OPERATOR_POLICY_FILE = join(PROJECT_ROOT, 'contract', 'operator-policy.json');

export interface AssemblyDeploymentOptions {
  /** A synthesized cloud assembly (`cdk.out`). */
  readonly assemblyDir: string;
  readonly stackName?: string;
  /** The operator's identity policy. @default contract/operator-policy.json, as docs/deploying.md prints it */
  readonly operatorPolicy?: PolicyDocument;
  /** A DynamoDB Local someone else runs (tests share one); the tables' names are the deployment's own. */
  readonly dynamodb?: SharedDynamoDb;
  /** Where each function's logs go, one file per function. */
  readonly logDir?: string;
  readonly onStatus?: (message: string) => void;
  /** Called once per denied request, with the one line that names the deciding statement. */
  readonly onDenial?: (line: string, decision: Decision) => void;
}

export interface AssemblyDeployment {
  readonly stack: ResolvedStack;
  /** The endpoint the SDK reaches every service at (AWS_ENDPOINT_URL). */
  readonly endpoint: string;
  /** The same endpoint as plain HTTP reaches it: `aws:SecureTransport` is false there. */
  readonly plainHttpEndpoint: string;
  readonly region: string;
  readonly account: string;
  /** The operator's credentials: what a person running the driver would sign with. */
  readonly operator: Credentials;
  /** Every denial so far, in order. */
  readonly denials: readonly Decision[];
  /** A function by its physical name, for its counters. */
  functionNamed(name: string): LocalFunction | undefined;
  /** The first fatal problem a mapping met (a handler that cannot initialise), if any. */
  fatalError(): Error | undefined;
  /** Each DLQ alarm's state, evaluated on the local queues (CloudWatch's rules, a 5 s period at most). */
  alarmStates(): Record<string, AlarmState>;
  stop(): Promise<void>;
}

/**
 * Deploys a synthesized assembly to the local runtime, from the assembly alone: its tables and
 * queues on the emulators, its functions (the asset folders' bundles on the Node their Runtime
 * names) with their resolved environment and their role's credentials, its mappings under Lambda's
 * create-time check, and every request through one gateway that authorizes it as IAM would.
 */
export async function deployAssembly(options: AssemblyDeploymentOptions): Promise<AssemblyDeployment> {
  const status = options.onStatus ?? (() => undefined);
  const teardown = new Teardown('local deployment did not stop cleanly');
  try {
    const assembly = readCloudAssembly(options.assemblyDir, options.stackName);
    status(
      `deploying ${assembly.stackName} from ${options.assemblyDir}: starting SQS (fauxqs) and DynamoDB Local`,
    );
    const dynamodbPort = options.dynamodb ? undefined : await reserveLoopbackPort();
    const dynamodbReady =
      dynamodbPort === undefined
        ? Promise.resolve()
        : teardown.whenStarted(startDynamoDbEmulator({ port: dynamodbPort }));
    const dynamodbEndpoint = options.dynamodb?.endpoint ?? `http://127.0.0.1:${dynamodbPort}`;
    const sqsEmulator = await teardown.whenStarted(startSqsEmulator());

    const principals = new Principals();
    const denials: Decision[] = [];
    const state: { stack?: ResolvedStack; directory?: ResourceDirectory; handlers?: Handlers } = {};
    const region = assembly.region ?? 'us-east-1';
    const gateway = await startGateway<Caller>({
      region,
      onModelError: (call, error) => status(`refused ${call.service}:${call.operation}: ${error.message}`),
      sqsEndpoint: sqsEmulator.endpoint,
      dynamodbEndpoint,
      handlers: {
        callerOf: (key) => principals.callerOf(key),
        // CloudFormation creates the resources before any other caller has credentials.
        authorize: async (caller, call, secure) =>
          caller.kind === 'deployer'
            ? { allowed: true }
            : required(state.handlers).authorize(caller, call, secure),
        answer: async (caller, call, raw) =>
          caller.kind === 'deployer' && !state.handlers
            ? undefined
            : required(state.handlers).answer(caller, call, raw),
      },
    });
    teardown.add(() => gateway.stop());

    const stack = resolveStack(assembly, {
      account: LOCAL_ACCOUNT,
      region,
      salt: String(Date.now()),
      queueUrl: (name) => `${gateway.endpoint}/${LOCAL_ACCOUNT}/${name}`,
      functionUrl: (name) => `${gateway.endpoint}/lambda-url/${name}/`,
    });
    state.stack = stack;
    refuseWhatIsNotModelled(stack);
    status(
      `${stack.ignored.length} template entries are accepted and not emulated (encryption, backups, SNS, the bootstrap check…): ` +
        'docs/deploying.md, "Before you deploy: run the assembly", lists them',
    );

    // CloudFormation's own calls: allowed everything, as the deployment role is.
    const deployer = principals.add({ kind: 'deployer', name: 'CloudFormation' });
    const sdk = { region, endpoint: gateway.endpoint, credentials: deployer };
    const sqs = new SQSClient(sdk);
    const dynamodb = new DynamoDBClient(sdk);
    teardown.add(async () => {
      sqs.destroy();
      dynamodb.destroy();
    });

    status('creating the tables and queues the template declares');
    await dynamodbReady;
    await Promise.all(stack.byType('AWS::DynamoDB::Table').map((table) => createTable(dynamodb, table)));
    for (const queue of queuesInCreationOrder(stack.byType('AWS::SQS::Queue'))) await createQueue(sqs, queue);
    const directory = resourceDirectory(stack, region);
    state.directory = directory;

    const operator = principals.add({
      kind: 'operator',
      name: 'operator',
      principal: {
        name: 'operator',
        arn: `arn:aws:iam::${LOCAL_ACCOUNT}:user/operator`,
        identityPolicies: [
          {
            name: 'operator-policy',
            policy: options.operatorPolicy ?? operatorPolicy(region, stack.stackName),
          },
        ],
      },
    });

    status('starting the functions on their runtime');
    const functions = await startFunctions(
      stack,
      principals,
      gateway.endpoint,
      region,
      assembly,
      options.logDir,
      teardown,
      status,
    );
    const moveTasks = new MoveTasks(
      sqs,
      (arn) => queueWhere(stack, 'Arn', arn)?.attributes.QueueUrl,
      (arn) => {
        // SQS returns each message to its own source queue; a DLQ shared by several is not modelled.
        const sources = directory.redriveSourcesOf(arn);
        if (sources.length > 1)
          throw new Error(
            `${arn} is the DLQ of ${sources.length} queues: a shared DLQ's move task is not modelled`,
          );
        return sources[0];
      },
    );
    // The queues' resource policies, by queue ARN: read once, for the gateway and the mappings' checks.
    const resourcePolicies = queuePolicies(stack);
    state.handlers = handlers(
      stack,
      directory,
      functions,
      moveTasks,
      region,
      resourcePolicies,
      (decision) => {
        denials.push(decision);
        options.onDenial?.(denialLine(decision), decision);
      },
    );

    status('creating the event source mappings (Lambda checks the role first)');
    let fatal: Error | undefined;
    const mappings = await createMappings(
      stack,
      functions,
      principals,
      { endpoint: gateway.endpoint, region, dynamodb },
      resourcePolicies,
      (error) => {
        fatal ??= error;
        status(`fatal: ${error.message}`);
      },
    );
    teardown.add(async () => {
      await Promise.all(mappings.map((mapping) => mapping.stop()));
    });
    for (const mapping of mappings) mapping.start();

    // The DLQ alarms, on the local queues' depth: SNS is not emulated, so a firing alarm is a line.
    const evaluable = localAlarmsOf(stack);
    for (const alarm of evaluable.notEvaluated)
      status(`alarm ${alarm.name} is not evaluated locally: ${alarm.why}`);
    const alarms = watchAlarms(
      evaluable.alarms,
      async (queueName, attribute) => {
        const url = queueWhere(stack, 'QueueName', queueName)?.attributes.QueueUrl;
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [attribute] }),
        );
        return Number(Attributes?.[attribute] ?? 0);
      },
      (alarm, alarmState, value, previous) => {
        if (alarmState === 'ALARM') {
          status(
            `alarm ${alarm.name} would fire: ${alarm.queueName} ${alarm.metric} ${value} (${alarm.comparison} ${alarm.threshold})`,
          );
        } else if (previous === 'ALARM') status(`alarm ${alarm.name} is ${alarmState} again`);
      },
    );
    teardown.add(() => alarms.stop());

    return {
      stack,
      endpoint: gateway.endpoint,
      plainHttpEndpoint: gateway.plainHttpEndpoint,
      region,
      account: LOCAL_ACCOUNT,
      operator,
      denials,
      functionNamed: (name) => functions.get(name)?.local,
      fatalError: () => fatal,
      alarmStates: () => alarms.states(),
      stop: () => teardown.run(),
    };
  } catch (error) {
    await teardown.run().catch(() => undefined);
    throw error;
  }
}

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the local deployment is still starting');
  return value;
}

/** The operator policy docs/deploying.md publishes, for this deployment's Region and account. */
export function operatorPolicy(
  region: string,
  stackName = 'DeliverySemantics',
  file = OPERATOR_POLICY_FILE,
): PolicyDocument {
  // The published policy names the default stack; `-c stackName` renames every resource after it.
  const text = readFileSync(file, 'utf8')
    .replaceAll('REGION', region)
    .replaceAll('ACCOUNT', LOCAL_ACCOUNT)
    .replaceAll('DeliverySemantics', stackName);
  return JSON.parse(text) as PolicyDocument;
}

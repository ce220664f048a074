import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PROJECT_ROOT } from '../../lib/bundling.js';
import { bundleHandlers } from '../bundling/bundle.js';
import {
  reserveLoopbackPort,
  type SharedDynamoDb,
  startDynamoDbEmulator,
} from '../emulators/dynamodb-emulator.js';
import { startSqsEmulator } from '../emulators/sqs-emulator.js';
import { Teardown } from '../environments/teardown.js';
import { LocalEventSourceMapping } from '../lambda-runtime/event-source-mapping.js';
import { LocalFunction } from '../lambda-runtime/local-function.js';
import { type AlarmState, localAlarmsOf, watchAlarms } from './alarms.js';
import { readCloudAssembly } from './cloud-assembly.js';
import {
  type DeployedFunction,
  describeStacks,
  functionConfiguration,
  invoke,
  MoveTasks,
} from './control-plane.js';
import { functionUrlAnswer, functionUrlEvent } from './function-url.js';
import {
  FUNCTION_URL_PATH,
  type GatewayHandlers,
  type ParsedCall,
  type RawRequest,
  startGateway,
} from './gateway/gateway.js';
import { authorizationRequestsOf } from './iam/actions.js';
import { checkSqsMappingRole } from './iam/create-time-check.js';
import { authorize, type Decision, denialLine, type Principal } from './iam/evaluate.js';
import type { PolicyDocument } from './iam/policy-document.js';
import type { ResourceDirectory } from './iam/service-call.js';
import { nodeBinaryFor, nodeMajorOf } from './node-runtime.js';
import { assumedRoleArn, type Caller, type Credentials, Principals, rolePolicies } from './principals.js';
import { createQueue, createTable, queuesInCreationOrder } from './provision.js';
import { type ResolvedStack, resolveStack } from './resolve-stack.js';
import { LocalStreamMapping } from './stream-mapping.js';

/** fauxqs names every queue in this account; the whole deployment uses it so the ARNs agree. */
export const LOCAL_ACCOUNT = '000000000000';
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
      options,
      teardown,
      status,
    );
    const moveTasks = new MoveTasks(
      sqs,
      (arn) =>
        stack.byType('AWS::SQS::Queue').find((queue) => queue.attributes.Arn === arn)?.attributes.QueueUrl,
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
    state.handlers = handlers(stack, directory, functions, moveTasks, region, (decision) => {
      denials.push(decision);
      options.onDenial?.(denialLine(decision), decision);
    });

    status('creating the event source mappings (Lambda checks the role first)');
    let fatal: Error | undefined;
    const mappings = await createMappings(
      stack,
      functions,
      principals,
      { endpoint: gateway.endpoint, region, dynamodb },
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
        const url = stack.byType('AWS::SQS::Queue').find((queue) => queue.attributes.QueueName === queueName)
          ?.attributes.QueueUrl;
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

type Handlers = Pick<GatewayHandlers<Caller>, 'authorize' | 'answer'>;

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the local deployment is still starting');
  return value;
}

/**
 * What the template may say that the local IAM model would get wrong, refused in one line: a
 * Function URL without AWS_IAM (the gateway checks every signature), and a queue policy naming
 * `lambda:SourceFunctionArn`, which AWS does not allow in resource-based policies
 * (https://docs.aws.amazon.com/lambda/latest/dg/permissions-source-function-arn.html).
 */
function refuseWhatIsNotModelled(stack: ResolvedStack): void {
  for (const url of stack.byType('AWS::Lambda::Url')) {
    const authType = (url.properties as { AuthType?: string }).AuthType;
    if (authType !== 'AWS_IAM') {
      throw new Error(
        `Resources.${url.logicalId} (AWS::Lambda::Url): AuthType ${authType} is not served locally (AWS_IAM only)`,
      );
    }
  }
  for (const policy of stack.byType('AWS::SQS::QueuePolicy')) {
    if (JSON.stringify(policy.properties).includes('lambda:SourceFunctionArn')) {
      throw new Error(
        `Resources.${policy.logicalId} (AWS::SQS::QueuePolicy): lambda:SourceFunctionArn is not valid in a resource-based policy`,
      );
    }
  }
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

function resourceDirectory(stack: ResolvedStack, region: string): ResourceDirectory {
  const queues = stack.byType('AWS::SQS::Queue');
  const tables = stack.byType('AWS::DynamoDB::Table');
  const fns = stack.byType('AWS::Lambda::Function');
  return {
    account: LOCAL_ACCOUNT,
    region,
    queueArnOfUrl: (url) => queues.find((queue) => queue.attributes.QueueUrl === url)?.attributes.Arn,
    queueArnOfName: (name) => queues.find((queue) => queue.attributes.QueueName === name)?.attributes.Arn,
    table: (name) => {
      const table = tables.find((candidate) => candidate.physicalId === name);
      if (!table) return undefined;
      const keys = (table.properties as { KeySchema: { AttributeName: string; KeyType: string }[] })
        .KeySchema;
      const partitionKey = keys.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '';
      const streamArn = table.attributes.StreamArn;
      return { arn: table.attributes.Arn as string, partitionKey, ...(streamArn ? { streamArn } : {}) };
    },
    functionArn: (nameOrArn) =>
      fns.find((fn) => fn.physicalId === nameOrArn || fn.attributes.Arn === nameOrArn)?.attributes.Arn,
    stackArn: (name) => (name === stack.stackName || name === stack.stackArn ? stack.stackArn : undefined),
    redriveSourcesOf: (deadLetterQueueArn) =>
      queues
        .filter(
          (queue) =>
            (queue.properties as { RedrivePolicy?: { deadLetterTargetArn?: string } }).RedrivePolicy
              ?.deadLetterTargetArn === deadLetterQueueArn,
        )
        .map((queue) => queue.attributes.Arn as string),
  };
}

/** Authorization of every call, then the control plane's answers (the rest goes to an emulator). */
function handlers(
  stack: ResolvedStack,
  directory: ResourceDirectory,
  functions: ReadonlyMap<string, DeployedFunction>,
  moveTasks: MoveTasks,
  region: string,
  onDenial: (decision: Decision) => void,
): Handlers {
  const resourcePolicies = queuePolicies(stack);
  const functionOf = (call: ParsedCall) => {
    const name = String(call.input.FunctionName ?? '');
    return [...functions.values()].find((fn) => fn.name === name || fn.arn === name);
  };
  return {
    authorize: async (caller, call, secureTransport) => {
      if (caller.kind === 'deployer') return { allowed: true };
      const requests = authorizationRequestsOf(call, directory, {
        secureTransport,
        ...(caller.kind === 'function' ? { sourceFunctionArn: caller.functionArn } : {}),
      });
      const decision = await authorize(caller.principal, requests, (arn) => resourcePolicies.get(arn));
      if (decision.allowed) return { allowed: true };
      onDenial(decision);
      return { allowed: false, message: awsDenialMessage(caller, decision) };
    },
    answer: async (caller, call, raw) => {
      if (call.service === 'cloudformation') return describeStacks(stack, call.input);
      if (call.service === 'sqs' && call.operation === 'StartMessageMoveTask')
        return moveTasks.start(call.input);
      if (call.service === 'sqs' && call.operation === 'ListMessageMoveTasks')
        return moveTasks.list(call.input);
      if (call.service !== 'lambda') return undefined;
      const fn = functionOf(call);
      if (!fn) {
        return {
          status: 404,
          headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' },
          body: JSON.stringify({
            Type: 'User',
            Message: `Function not found: ${String(call.input.FunctionName)}`,
          }),
        };
      }
      if (call.operation === 'InvokeFunctionUrl') {
        const hasUrl = stack
          .byType('AWS::Lambda::Url')
          .some((url) => (url.properties as { TargetFunctionArn?: string }).TargetFunctionArn === fn.arn);
        if (!hasUrl)
          return { status: 404, headers: { 'content-type': 'application/json' }, body: '{"Message":null}' };
        return invokeFunctionUrl(fn, caller, raw, region);
      }
      if (call.operation === 'GetFunctionConfiguration') return functionConfiguration(fn);
      if (call.operation === 'Invoke') {
        const type = String(raw.headers['x-amz-invocation-type'] ?? 'RequestResponse');
        if (type !== 'RequestResponse' || new URL(raw.url, 'http://gateway').searchParams.has('Qualifier')) {
          return {
            status: 400,
            headers: {
              'content-type': 'application/json',
              'x-amzn-errortype': 'InvalidParameterValueException',
            },
            body: JSON.stringify({
              Type: 'User',
              Message: `the local runtime serves synchronous invocations of $LATEST only (InvocationType ${type})`,
            }),
          };
        }
        return invoke(fn, raw.body, raw.headers['x-amz-log-type'] === 'Tail');
      }
      return undefined;
    },
  };
}

/**
 * A call to a function's URL (AWS_IAM: its caller was authorized as any other): the HTTP request as
 * the payload 2.0 event, the function's answer as HTTP (harness/assembly/function-url.ts).
 */
async function invokeFunctionUrl(fn: DeployedFunction, caller: Caller, raw: RawRequest, region: string) {
  const url = new URL(raw.url, 'http://gateway');
  const path = FUNCTION_URL_PATH.exec(url.pathname)?.[2] ?? '/';
  const event = functionUrlEvent(
    { method: raw.method, path, query: url.search, headers: raw.headers, body: raw.body },
    {
      accountId: LOCAL_ACCOUNT,
      urlId: fn.name.toLowerCase(),
      region,
      ...(caller.kind !== 'deployer' ? { caller: { accessKeyId: '', userArn: caller.principal.arn } } : {}),
    },
  );
  const answer = functionUrlAnswer(await fn.local.invoke(event));
  return { status: answer.status, headers: answer.headers, body: answer.body };
}

/** AWS's wording of a denial, which the SDK's error carries as its message. */
function awsDenialMessage(caller: Exclude<Caller, { kind: 'deployer' }>, decision: Decision): string {
  const why =
    decision.reason === 'explicit deny'
      ? `with an explicit deny in ${decision.statement?.includes('resource policy') ? 'a resource-based' : 'an identity-based'} policy`
      : `because no identity-based policy allows the ${decision.action} action`;
  return `User: ${caller.principal.arn} is not authorized to perform: ${decision.action} on resource: ${decision.resource} ${why}`;
}

/** Each queue's resource policy (AWS::SQS::QueuePolicy), by queue ARN. */
function queuePolicies(stack: ResolvedStack): Map<string, PolicyDocument> {
  const byArn = new Map<string, PolicyDocument>();
  for (const policy of stack.byType('AWS::SQS::QueuePolicy')) {
    const p = policy.properties as { PolicyDocument: PolicyDocument; Queues: string[] };
    for (const url of p.Queues) {
      const arn = stack.byType('AWS::SQS::Queue').find((queue) => queue.attributes.QueueUrl === url)
        ?.attributes.Arn;
      if (arn) byArn.set(arn, p.PolicyDocument);
    }
  }
  return byArn;
}

async function startFunctions(
  stack: ResolvedStack,
  principals: Principals,
  endpoint: string,
  region: string,
  options: AssemblyDeploymentOptions,
  teardown: Teardown,
  status: (message: string) => void,
): Promise<Map<string, DeployedFunction>> {
  const assembly = readCloudAssembly(options.assemblyDir, options.stackName);
  // Only the worker that hosts a handler in its process: the handlers are the assembly's own bundles.
  const bundles = await bundleHandlers([]);
  teardown.add(() => bundles.dispose());
  const functions = new Map<string, DeployedFunction>();
  for (const resource of stack.byType('AWS::Lambda::Function')) {
    const p = resource.properties as unknown as FunctionProperties;
    const where = `Resources.${resource.logicalId}`;
    const nodePath = await nodeBinaryFor(nodeMajorOf(p.Runtime, where), status);
    const folder = assembly.assetFolderOfS3Key(p.Code.S3Key);
    const [file, exported] = splitHandler(p.Handler, folder, where);
    const roleName = roleNameOf(p.Role);
    const principal = {
      name: resource.physicalId,
      arn: assumedRoleArn(LOCAL_ACCOUNT, roleName, resource.physicalId),
      identityPolicies: rolePolicies(stack, roleName),
    };
    const credentials = principals.add({
      kind: 'function',
      name: resource.physicalId,
      principal,
      functionArn: resource.attributes.Arn as string,
    });
    const variables = p.Environment?.Variables ?? {};
    const local = new LocalFunction({
      name: resource.physicalId,
      bundlePath: file,
      workerPath: bundles.worker,
      nodePath,
      timeoutMs: (p.Timeout ?? 3) * 1000,
      memoryMb: p.MemorySize ?? 128,
      exportName: exported,
      // The locality rewrites (docs/deploying.md lists them): where AWS is, the Region, and the
      // role's credentials, which Lambda would put in these same variables.
      environment: {
        ...variables,
        AWS_REGION: region,
        AWS_DEFAULT_REGION: region,
        AWS_ENDPOINT_URL: endpoint,
        AWS_ACCESS_KEY_ID: credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      },
      ...(options.logDir ? { logSink: logSink(options.logDir, resource.physicalId, teardown) } : {}),
    });
    teardown.add(() => local.stop());
    functions.set(resource.physicalId, {
      name: resource.physicalId,
      arn: resource.attributes.Arn as string,
      roleArn: p.Role,
      runtime: String(p.Runtime),
      handler: p.Handler,
      timeoutSeconds: p.Timeout ?? 3,
      memoryMb: p.MemorySize ?? 128,
      variables,
      local,
    });
  }
  return functions;
}

interface FunctionProperties {
  readonly Code: { readonly S3Key: string };
  readonly Handler: string;
  readonly Runtime: unknown;
  readonly Role: string;
  readonly Timeout?: number;
  readonly MemorySize?: number;
  readonly Environment?: { readonly Variables?: Record<string, string> };
}

/** `index.handler` → the folder's index.mjs (or .js, .cjs) and its export `handler`. */
function splitHandler(handler: string, folder: string, where: string): [string, string] {
  const dot = handler.lastIndexOf('.');
  const base = handler.slice(0, dot);
  const exported = handler.slice(dot + 1);
  const file = ['.mjs', '.js', '.cjs'].map((extension) => join(folder, base + extension)).find(existsSync);
  if (dot <= 0 || !file) throw new Error(`${where}: Handler ${handler} names no module in ${folder}`);
  return [file, exported];
}

/** `arn:aws:iam::<account>:role/<name>` → `<name>`. */
function roleNameOf(roleArn: string): string {
  return roleArn.slice(roleArn.lastIndexOf('/') + 1);
}

function logSink(dir: string, name: string, teardown: Teardown) {
  mkdirSync(dir, { recursive: true });
  const stream = createWriteStream(join(dir, `${name}.log`));
  stream.on('error', () => undefined);
  teardown.add(() => new Promise((resolve) => stream.end(resolve)));
  return stream;
}

/**
 * Each AWS::Lambda::EventSourceMapping on a queue, after Lambda's create-time check: the role may
 * receive, delete and read the queue's attributes, and the queue's visibility timeout is at least
 * the function's timeout (CreateEventSourceMapping refuses otherwise). Its poller signs as the
 * function's role, without the function's `lambda:SourceFunctionArn`.
 */
async function createMappings(
  stack: ResolvedStack,
  functions: ReadonlyMap<string, DeployedFunction>,
  principals: Principals,
  local: { readonly endpoint: string; readonly region: string; readonly dynamodb: DynamoDBClient },
  onFatal: (error: Error) => void,
): Promise<Array<LocalEventSourceMapping | LocalStreamMapping>> {
  const { endpoint, region } = local;
  const resourcePolicies = queuePolicies(stack);
  const mappings: Array<LocalEventSourceMapping | LocalStreamMapping> = [];
  for (const resource of stack.byType('AWS::Lambda::EventSourceMapping')) {
    const p = resource.properties as unknown as MappingProperties;
    const where = `Resources.${resource.logicalId} (AWS::Lambda::EventSourceMapping)`;
    const fn = [...functions.values()].find(
      (candidate) => candidate.name === p.FunctionName || candidate.arn === p.FunctionName,
    );
    if (!fn) throw new Error(`${where}: FunctionName ${p.FunctionName} is no function of the stack`);
    const principal = {
      name: `${fn.name} (event source mapping)`,
      arn: assumedRoleArn(LOCAL_ACCOUNT, roleNameOf(fn.roleArn), 'awslambda-poller'),
      identityPolicies: rolePolicies(stack, roleNameOf(fn.roleArn)),
    };
    const table = stack
      .byType('AWS::DynamoDB::Table')
      .find((candidate) => candidate.attributes.StreamArn === p.EventSourceArn);
    if (p.Enabled === false) continue;
    if (table) {
      mappings.push(
        await streamMapping(stack, fn, table.physicalId, principal, principals, local, p, where, onFatal),
      );
      continue;
    }
    const queue = stack
      .byType('AWS::SQS::Queue')
      .find((candidate) => candidate.attributes.Arn === p.EventSourceArn);
    if (!queue) {
      throw new Error(
        `${where}: EventSourceArn ${p.EventSourceArn} is neither a queue nor a table's stream of the stack`,
      );
    }
    const queueProperties = queue.properties as { VisibilityTimeout?: number; FifoQueue?: boolean };
    const visibility = queueProperties.VisibilityTimeout ?? 30;
    if (visibility < fn.timeoutSeconds) {
      throw new Error(
        `${where}: InvalidParameterValueException: Queue visibility timeout: ${visibility} seconds is less than Function timeout: ${fn.timeoutSeconds} seconds`,
      );
    }
    try {
      await checkSqsMappingRole(principal, queue.attributes.Arn as string, (arn) =>
        resourcePolicies.get(arn),
      );
    } catch (error) {
      throw new Error(`${where}: ${(error as Error).name}: ${(error as Error).message}`);
    }
    const credentials = principals.add({ kind: 'poller', name: principal.name, principal });
    if (p.FilterCriteria !== undefined) {
      throw new Error(`${where}: FilterCriteria on an SQS mapping is not supported by the local runtime`);
    }
    const scaling = p.ScalingConfig?.MaximumConcurrency;
    const pollers = p.ProvisionedPollerConfig?.MaximumPollers;
    mappings.push(
      new LocalEventSourceMapping({
        sqs: new SQSClient({ region, endpoint, credentials }),
        queueUrl: queue.attributes.QueueUrl as string,
        queueArn: queue.attributes.Arn as string,
        region,
        fn: fn.local,
        batchSize: p.BatchSize ?? 10,
        maxBatchingWindowMs: (p.MaximumBatchingWindowInSeconds ?? 0) * 1000,
        // Provisioned pollers invoke up to 10 batches each; without either setting Lambda scales to
        // 1,250 concurrent invocations, which a laptop cannot show: 5, as the stack's default.
        maxConcurrency: pollers !== undefined ? pollers * 10 : (scaling ?? 5),
        reportBatchItemFailures: (p.FunctionResponseTypes ?? []).includes('ReportBatchItemFailures'),
        fifo: queueProperties.FifoQueue === true,
        visibilityTimeoutMs: visibility * 1000,
        onFatal,
      }),
    );
  }
  return mappings;
}

/**
 * A DynamoDB stream's mapping, after Lambda's create-time check (the role may DescribeStream,
 * GetRecords, GetShardIterator and ListStreams: with-ddb.html, "Execution role permissions"). Its
 * poller reads DynamoDB Local's stream as the function's role; failed batches go to the on-failure
 * destination, sent by the poller's role as Lambda sends them.
 */
async function streamMapping(
  stack: ResolvedStack,
  fn: DeployedFunction,
  tableName: string,
  principal: Principal,
  principals: Principals,
  local: { readonly endpoint: string; readonly region: string; readonly dynamodb: DynamoDBClient },
  p: MappingProperties,
  where: string,
  onFatal: (error: Error) => void,
): Promise<LocalStreamMapping> {
  if ((p.ParallelizationFactor ?? 1) !== 1) {
    throw new Error(
      `${where}: ParallelizationFactor ${p.ParallelizationFactor} is not supported by the local runtime (1 only)`,
    );
  }
  const streamArn = p.EventSourceArn;
  const context = { 'aws:SecureTransport': 'true' };
  const reads = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];
  const decision = await authorize(
    principal,
    [
      ...reads.map((action) => ({ action, resource: streamArn, context })),
      { action: 'dynamodb:ListStreams', resource: '*', context },
    ],
    () => undefined,
  );
  if (!decision.allowed) {
    throw new Error(
      `${where}: InvalidParameterValueException: the execution role cannot read the stream (${denialLine(decision)})`,
    );
  }
  const { Table } = await local.dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  const localStreamArn = Table?.LatestStreamArn;
  if (!localStreamArn) throw new Error(`${where}: the table ${tableName} has no stream`);
  const credentials = principals.add({ kind: 'poller', name: principal.name, principal });
  const sdk = { region: local.region, endpoint: local.endpoint, credentials };
  const destination = p.DestinationConfig?.OnFailure?.Destination;
  const destinationUrl = destination
    ? stack.byType('AWS::SQS::Queue').find((queue) => queue.attributes.Arn === destination)?.attributes
        .QueueUrl
    : undefined;
  if (destination && !destinationUrl) {
    throw new Error(`${where}: the on-failure destination ${destination} is no queue of the stack`);
  }
  const sqs = new SQSClient(sdk);
  return new LocalStreamMapping({
    streams: new DynamoDBStreamsClient(sdk),
    streamArn: localStreamArn,
    fn: fn.local,
    batchSize: p.BatchSize ?? 100,
    maxBatchingWindowMs: (p.MaximumBatchingWindowInSeconds ?? 0) * 1000,
    startingPosition: p.StartingPosition === 'TRIM_HORIZON' ? 'TRIM_HORIZON' : 'LATEST',
    filterPatterns: (p.FilterCriteria?.Filters ?? []).map((filter) => filter.Pattern),
    reportBatchItemFailures: (p.FunctionResponseTypes ?? []).includes('ReportBatchItemFailures'),
    bisectOnError: p.BisectBatchOnFunctionError ?? false,
    maximumRetryAttempts: p.MaximumRetryAttempts ?? -1,
    maximumRecordAgeSeconds: p.MaximumRecordAgeInSeconds ?? -1,
    ...(destinationUrl
      ? {
          onFailure: async (_records: unknown[], _reason: string, record: unknown) => {
            await sqs.send(
              new SendMessageCommand({ QueueUrl: destinationUrl, MessageBody: JSON.stringify(record) }),
            );
          },
        }
      : {}),
    region: local.region,
    accountId: LOCAL_ACCOUNT,
    onFatal,
  });
}

interface MappingProperties {
  readonly FunctionName: string;
  readonly EventSourceArn: string;
  readonly StartingPosition?: string;
  readonly BisectBatchOnFunctionError?: boolean;
  readonly MaximumRetryAttempts?: number;
  readonly MaximumRecordAgeInSeconds?: number;
  readonly FilterCriteria?: { readonly Filters?: ReadonlyArray<{ readonly Pattern: string }> };
  readonly DestinationConfig?: { readonly OnFailure?: { readonly Destination?: string } };
  readonly ParallelizationFactor?: number;
  readonly Enabled?: boolean;
  readonly BatchSize?: number;
  readonly MaximumBatchingWindowInSeconds?: number;
  readonly FunctionResponseTypes?: string[];
  readonly ScalingConfig?: { readonly MaximumConcurrency?: number };
  readonly ProvisionedPollerConfig?: { readonly MinimumPollers?: number; readonly MaximumPollers?: number };
}

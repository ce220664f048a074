import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { LocalEventSourceMapping } from '../../local-aws/lambda-runtime/event-source-mapping.js';
import type { DeployedFunction } from './control-plane.js';
import { checkSqsMappingRole } from './iam/create-time-check.js';
import { authorize, denialLine, type Principal } from './iam/evaluate.js';
import type { PolicyDocument } from './iam/policy-document.js';
import { roleNameOf } from './local-functions.js';
import { LOCAL_ACCOUNT } from './locality.js';
import { assumedRoleArn, type Principals, rolePolicies } from './principals.js';
import type { ResolvedStack } from './resolve-stack.js';
import { queueWhere } from './stack-index.js';
import { LocalStreamMapping } from './stream-mapping.js';

/**
 * The stack's event source mappings on the local runtime: SQS queues (harness/local-aws/lambda-runtime's
 * mapping) and DynamoDB streams (stream-mapping.ts), each after Lambda's create-time checks, each
 * polling with its function's role and without the function's `lambda:SourceFunctionArn`.
 */

/**
 * Each AWS::Lambda::EventSourceMapping on a queue, after Lambda's create-time check: the role may
 * receive, delete and read the queue's attributes, and the queue's visibility timeout is at least
 * the function's timeout (CreateEventSourceMapping refuses otherwise). Its poller signs as the
 * function's role, without the function's `lambda:SourceFunctionArn`.
 */
export async function createMappings(
  stack: ResolvedStack,
  functions: ReadonlyMap<string, DeployedFunction>,
  principals: Principals,
  local: { readonly endpoint: string; readonly region: string; readonly dynamodb: DynamoDBClient },
  resourcePolicies: ReadonlyMap<string, PolicyDocument>,
  onFatal: (error: Error) => void,
): Promise<Array<LocalEventSourceMapping | LocalStreamMapping>> {
  const { endpoint, region } = local;
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
    const queue = queueWhere(stack, 'Arn', p.EventSourceArn);
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
  const destinationUrl = destination ? queueWhere(stack, 'Arn', destination)?.attributes.QueueUrl : undefined;
  if (destination && !destinationUrl) {
    throw new Error(`${where}: the on-failure destination ${destination} is no queue of the stack`);
  }
  const sqs = new SQSClient(sdk);
  return new LocalStreamMapping({
    streams: new DynamoDBStreamsClient(sdk),
    streamArn: localStreamArn,
    // The function sees the template's StreamArn, as on AWS; the poller reads DynamoDB Local's stream.
    eventSourceArn: p.EventSourceArn,
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

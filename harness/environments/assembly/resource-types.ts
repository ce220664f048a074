import { createHash } from 'node:crypto';
import { UnsupportedTemplateError } from './intrinsics.js';

/**
 * Every CloudFormation resource type the local runtime deploys: the properties it runs, the ones it
 * accepts without emulating (each with why), its Ref value and attributes as the type's "Return
 * values" section documents them (the page is cited per type), and its physical name. A type or a
 * property that is not here is refused in one line (resolve-stack.ts): never skipped silently.
 */

const DOCS = 'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference';

/** What a type's return values are computed from. */
export interface ReturnContext {
  /** The resource's name: its name property, or the one CloudFormation would generate. */
  readonly name: string;
  /** A deterministic UUID, for the types whose id is one (a mapping, a key). */
  readonly uuid: string;
  readonly account: string;
  readonly region: string;
  readonly partition: string;
  /** A property of the resource, resolved (only the few that return values depend on). */
  property(name: string): unknown;
  queueUrl(queueName: string): string;
  functionUrl(functionName: string): string;
  /** When the stack was "created": a stream's label is its creation time. */
  readonly createdAt: Date;
}

/** A resource's Ref value and its `Fn::GetAtt` attributes. */
export interface Returns {
  /** Undefined when the documentation gives no Ref: a Ref to it is refused. */
  readonly ref?: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** A named type's name: its name property wins; else generated, up to the service's limit. */
export interface NameRule {
  readonly property?: string;
  readonly maxLength: number;
  /** The boolean property that makes the name end in `.fifo` (kept whatever the cut). */
  readonly fifo?: string;
}

export interface ResourceTypeSpec {
  /** The type's page in the CloudFormation Template Reference ("Return values" is the source). */
  readonly docs: string;
  /** Properties the local runtime runs as AWS would. */
  readonly supported: readonly string[];
  /** Properties accepted and not emulated, each with why (a dotted key names a nested property). */
  readonly notEmulated: Readonly<Record<string, string>>;
  /**
   * How the resource is named: by a name property (or generated `<stack>-<logicalId>-<SUFFIX>` up
   * to the service's limit), or by a UUID.
   */
  readonly naming: NameRule | 'uuid';
  readonly returns: (resource: ReturnContext) => Returns;
  /** Checks beyond property names, on the resolved properties. */
  readonly check?: (properties: Readonly<Record<string, unknown>>, path: string) => void;
}

/** Types in the template that have nothing to run, with why. */
export const IGNORED_TYPES: Readonly<Record<string, string>> = {
  'AWS::CDK::Metadata':
    "CDK's usage metadata (https://docs.aws.amazon.com/cdk/v2/guide/usage-data.html): nothing to run",
};

const ENCRYPTION_AT_REST = 'encryption at rest is not emulated (local data is in memory or a scratch folder)';
const NO_SNS = 'there is no SNS locally: nothing publishes or delivers (a firing alarm is logged instead)';
const NO_KMS = `there is no KMS locally: the key only encrypts what is not emulated (${NO_SNS})`;
const arn = (c: ReturnContext, service: string, resource: string) =>
  `arn:${c.partition}:${service}:${c.region}:${c.account}:${resource}`;
/**
 * Types whose physical id is a generated name, their Ref and `Id` that id (the primary identifier,
 * as aws-cdk-lib's generated `queuePolicyRef`, `topicPolicyRef` and `policyRef` read their Ref).
 */
const byId = (docs: string, supported: string[], maxLength: number): ResourceTypeSpec => ({
  docs,
  supported,
  notEmulated: {},
  naming: { maxLength },
  returns: (c) => ({ ref: c.name, attributes: { Id: c.name } }),
});

export const RESOURCE_TYPES: Readonly<Record<string, ResourceTypeSpec>> = {
  'AWS::SQS::Queue': {
    docs: `${DOCS}/aws-resource-sqs-queue.html#aws-resource-sqs-queue-return-values`,
    supported: [
      ...['QueueName', 'VisibilityTimeout', 'MessageRetentionPeriod', 'MaximumMessageSize', 'RedrivePolicy'],
      ...['DelaySeconds', 'ReceiveMessageWaitTimeSeconds', 'FifoQueue', 'ContentBasedDeduplication'],
      'DeduplicationScope',
    ],
    notEmulated: {
      SqsManagedSseEnabled: ENCRYPTION_AT_REST,
      KmsMasterKeyId: ENCRYPTION_AT_REST,
      KmsDataKeyReusePeriodSeconds: ENCRYPTION_AT_REST,
      FifoThroughputLimit: 'a throughput quota: local queues have none',
    },
    // 80 characters, `.fifo` included (the SQS Developer Guide's quotas); see generatedName().
    naming: { property: 'QueueName', maxLength: 80, fifo: 'FifoQueue' },
    returns: (c) => {
      const url = c.queueUrl(c.name);
      return { ref: url, attributes: { Arn: arn(c, 'sqs', c.name), QueueName: c.name, QueueUrl: url } };
    },
  },
  'AWS::SQS::QueuePolicy': byId(
    `${DOCS}/aws-resource-sqs-queuepolicy.html#aws-resource-sqs-queuepolicy-return-values`,
    ['PolicyDocument', 'Queues'],
    255,
  ),
  'AWS::DynamoDB::Table': {
    docs: `${DOCS}/aws-resource-dynamodb-table.html#aws-resource-dynamodb-table-return-values`,
    supported: [
      ...['TableName', 'KeySchema', 'AttributeDefinitions', 'GlobalSecondaryIndexes'],
      ...['TimeToLiveSpecification', 'StreamSpecification'],
    ],
    notEmulated: {
      BillingMode: 'capacity: DynamoDB Local neither bills nor throttles',
      ProvisionedThroughput: 'capacity: DynamoDB Local neither bills nor throttles',
      PointInTimeRecoverySpecification: 'backups: a local table lives as long as its run',
      SSESpecification: ENCRYPTION_AT_REST,
      DeletionProtectionEnabled: 'guards the table against deletion; a local deployment is thrown away whole',
      TableClass: 'a storage price class',
    },
    naming: { property: 'TableName', maxLength: 255 },
    returns: (c) => {
      const tableArn = arn(c, 'dynamodb', `table/${c.name}`);
      // A stream's ARN ends in its label, the time it was enabled (ISO 8601 without the zone).
      const label = c.createdAt.toISOString().replace(/Z$/, '');
      const attributes: Record<string, string> = { Arn: tableArn };
      if (c.property('StreamSpecification') !== undefined)
        attributes.StreamArn = `${tableArn}/stream/${label}`;
      return { ref: c.name, attributes };
    },
  },
  'AWS::Lambda::Function': {
    docs: `${DOCS}/aws-resource-lambda-function.html#aws-resource-lambda-function-return-values`,
    supported: ['FunctionName', 'Code', 'Handler', 'Runtime', 'Timeout', 'MemorySize', 'Environment', 'Role'],
    notEmulated: {
      Architectures: "the code runs on this machine's CPU (the bundles are JavaScript, for any architecture)",
      LoggingConfig: "logs go to the run's own log, not to CloudWatch Logs",
      TracingConfig: 'X-Ray tracing is not emulated',
      Description: 'text only',
      'Code.S3Bucket': "the code is read from the assembly's asset folder, not from the bootstrap bucket",
    },
    naming: { property: 'FunctionName', maxLength: 64 },
    returns: (c) => ({ ref: c.name, attributes: { Arn: arn(c, 'lambda', `function:${c.name}`) } }),
    check: (p, path) => {
      const code = p.Code as Record<string, unknown> | undefined;
      const extra = Object.keys(code ?? {}).filter((key) => key !== 'S3Bucket' && key !== 'S3Key');
      if (typeof code?.S3Key !== 'string' || extra.length > 0) {
        throw new UnsupportedTemplateError(
          `${path}.Code: only an asset (S3Bucket, S3Key) is supported by the local runtime, the template gives ${Object.keys(code ?? {}).join(', ') || 'none'}`,
        );
      }
      if (typeof p.Runtime !== 'string' || !p.Runtime.startsWith('nodejs')) {
        throw new UnsupportedTemplateError(
          `${path}.Runtime: ${String(p.Runtime)} is not supported (Node.js only)`,
        );
      }
    },
  },
  'AWS::Lambda::EventSourceMapping': {
    docs: `${DOCS}/aws-resource-lambda-eventsourcemapping.html#aws-resource-lambda-eventsourcemapping-return-values`,
    supported: [
      ...['EventSourceArn', 'FunctionName', 'Enabled', 'BatchSize', 'MaximumBatchingWindowInSeconds'],
      ...['FunctionResponseTypes', 'ScalingConfig', 'ProvisionedPollerConfig', 'FilterCriteria'],
      // A stream's mapping (the outbox relay's).
      ...['StartingPosition', 'BisectBatchOnFunctionError', 'DestinationConfig', 'MaximumRecordAgeInSeconds'],
      ...['MaximumRetryAttempts', 'ParallelizationFactor'],
    ],
    notEmulated: {},
    naming: 'uuid',
    returns: (c) => ({
      ref: c.uuid,
      attributes: { Id: c.uuid, EventSourceMappingArn: arn(c, 'lambda', `event-source-mapping:${c.uuid}`) },
    }),
  },
  'AWS::Lambda::Url': {
    docs: `${DOCS}/aws-resource-lambda-url.html#aws-resource-lambda-url-return-values`,
    supported: ['TargetFunctionArn', 'AuthType'],
    notEmulated: { Cors: 'what browsers may call it cross-origin; no browser calls it here' },
    naming: { maxLength: 255 },
    // Ref is the function's ARN (the type's primary identifier, as aws-cdk-lib's CfnUrl.urlRef reads it).
    returns: (c) => {
      const target = String(c.property('TargetFunctionArn'));
      const functionName = target.startsWith('arn:') ? (target.split(':')[6] as string) : target;
      const functionArn = target.startsWith('arn:') ? target : arn(c, 'lambda', `function:${target}`);
      return {
        ref: functionArn,
        attributes: { FunctionArn: functionArn, FunctionUrl: c.functionUrl(functionName) },
      };
    },
  },
  'AWS::Lambda::Permission': {
    docs: `${DOCS}/aws-resource-lambda-permission.html#aws-resource-lambda-permission-return-values`,
    supported: [
      ...['Action', 'FunctionName', 'Principal', 'SourceArn', 'SourceAccount'],
      ...['FunctionUrlAuthType', 'InvokedViaFunctionUrl'],
    ],
    notEmulated: {},
    naming: { maxLength: 100 },
    // Ref is `FunctionName|Id` (the primary identifier, as aws-cdk-lib's CfnPermission.permissionRef splits it).
    returns: (c) => ({ ref: `${String(c.property('FunctionName'))}|${c.name}`, attributes: { Id: c.name } }),
  },
  'AWS::IAM::Role': {
    docs: `${DOCS}/aws-resource-iam-role.html#aws-resource-iam-role-return-values`,
    supported: ['RoleName', 'Path', 'AssumeRolePolicyDocument', 'ManagedPolicyArns', 'Policies'],
    notEmulated: {
      Description: 'text only',
      MaxSessionDuration: "sessions: the local principals' credentials do not expire",
    },
    naming: { property: 'RoleName', maxLength: 64 },
    returns: (c) => ({
      ref: c.name,
      attributes: {
        Arn: `arn:${c.partition}:iam::${c.account}:role${String(c.property('Path') ?? '/')}${c.name}`,
        RoleId: `AROA${hashed(`role/${c.uuid}`, 17)}`,
      },
    }),
  },
  'AWS::IAM::Policy': byId(
    `${DOCS}/aws-resource-iam-policy.html#aws-resource-iam-policy-return-values`,
    ['PolicyName', 'PolicyDocument', 'Roles'],
    128,
  ),
  'AWS::Logs::LogGroup': {
    docs: `${DOCS}/aws-resource-logs-loggroup.html#aws-resource-logs-loggroup-return-values`,
    supported: ['LogGroupName'],
    notEmulated: {
      RetentionInDays: "logs are the run's own output, kept as long as it is",
      KmsKeyId: ENCRYPTION_AT_REST,
    },
    naming: { property: 'LogGroupName', maxLength: 512 },
    returns: (c) => ({ ref: c.name, attributes: { Arn: arn(c, 'logs', `log-group:${c.name}:*`) } }),
  },
  'AWS::KMS::Key': {
    docs: `${DOCS}/aws-resource-kms-key.html#aws-resource-kms-key-return-values`,
    supported: [],
    notEmulated: Object.fromEntries(
      'Description Enabled EnableKeyRotation KeyPolicy KeySpec KeyUsage PendingWindowInDays'
        .split(' ')
        .map((property) => [property, NO_KMS]),
    ),
    naming: 'uuid',
    returns: (c) => ({ ref: c.uuid, attributes: { Arn: arn(c, 'kms', `key/${c.uuid}`), KeyId: c.uuid } }),
  },
  'AWS::SNS::Topic': {
    docs: `${DOCS}/aws-resource-sns-topic.html#aws-resource-sns-topic-return-values`,
    supported: ['TopicName'],
    notEmulated: { DisplayName: NO_SNS, KmsMasterKeyId: ENCRYPTION_AT_REST },
    naming: { property: 'TopicName', maxLength: 256 },
    returns: (c) => {
      const topicArn = arn(c, 'sns', c.name);
      return { ref: topicArn, attributes: { TopicArn: topicArn, TopicName: c.name } };
    },
  },
  'AWS::SNS::TopicPolicy': {
    ...byId(`${DOCS}/aws-resource-sns-topicpolicy.html#aws-resource-sns-topicpolicy-return-values`, [], 255),
    notEmulated: { PolicyDocument: NO_SNS, Topics: NO_SNS },
  },
  'AWS::SNS::Subscription': {
    docs: `${DOCS}/aws-resource-sns-subscription.html#aws-resource-sns-subscription-return-values`,
    supported: [],
    notEmulated: { TopicArn: NO_SNS, Protocol: NO_SNS, Endpoint: NO_SNS },
    naming: 'uuid',
    returns: (c) => {
      const subscriptionArn = `${String(c.property('TopicArn'))}:${c.uuid}`;
      return { ref: subscriptionArn, attributes: { Arn: subscriptionArn } };
    },
  },
  'AWS::CloudWatch::Alarm': {
    docs: `${DOCS}/aws-resource-cloudwatch-alarm.html#aws-resource-cloudwatch-alarm-return-values`,
    supported: [
      ...['AlarmName', 'AlarmDescription', 'Namespace', 'MetricName', 'Dimensions', 'Statistic', 'Period'],
      ...['EvaluationPeriods', 'DatapointsToAlarm', 'Threshold', 'ComparisonOperator', 'TreatMissingData'],
    ],
    notEmulated: { AlarmActions: NO_SNS, OKActions: NO_SNS, InsufficientDataActions: NO_SNS },
    naming: { property: 'AlarmName', maxLength: 255 },
    returns: (c) => ({ ref: c.name, attributes: { Arn: arn(c, 'cloudwatch', `alarm:${c.name}`) } }),
  },
};

/**
 * The name CloudFormation gives a resource without a name property: `<stack>-<logicalId>-<SUFFIX>`
 * ("Name type", https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-name.html:
 * "CloudFormation generates a unique physical ID to name a resource", e.g.
 * `MyStack-MyBucket-abcdefghijk1`). CloudFormation's suffix is random; here it is 12 uppercase
 * letters and digits from a hash of the stack, the logical id and `salt`, so a test can predict it
 * and two local deployments (two salts) differ. The page does not say how a long name is cut to the
 * service's limit: the logical id is cut first, keeping the stack-name prefix the operator policy's
 * `DeliverySemantics-*` patterns match (docs/deploying.md). `ending` (a FIFO queue's `.fifo`) is
 * always kept.
 */
export function generatedName(
  stackName: string,
  logicalId: string,
  salt: string,
  maxLength: number,
  ending = '',
): string {
  const suffix = hashed(`name/${stackName}/${logicalId}/${salt}`, 12);
  const room = maxLength - ending.length - suffix.length - 2;
  let logical = logicalId;
  let stack = stackName;
  if (stack.length + logical.length > room) logical = logical.slice(0, Math.max(room - stack.length, 1));
  if (stack.length + logical.length > room) stack = stack.slice(0, room - logical.length).replace(/-+$/, '');
  return `${stack}-${logical}-${suffix}${ending}`;
}

/** A UUID (version 4's layout) from a hash of the stack, the logical id and `salt`. */
export function deterministicUuid(stackName: string, logicalId: string, salt: string): string {
  const hex = createHash('sha256').update(`uuid/${stackName}/${logicalId}/${salt}`).digest('hex');
  const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** `length` uppercase letters and digits from a hash of `seed`. */
function hashed(seed: string, length: number): string {
  const digest = createHash('sha256').update(seed).digest('hex');
  return BigInt(`0x${digest}`).toString(36).toUpperCase().padStart(length, '0').slice(0, length);
}

import {
  ArnFormat,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  type DeploymentSettings,
  deploymentRetention,
  resolveModeSettings,
} from '../contract/deployment-settings.js';
import { consumerEnvironment, verifierEnvironment } from '../contract/function-environment.js';
import { partitionKey } from '../contract/ledger-keys.js';
import { DEAD_LETTER_RETENTION_SECONDS, QUEUE_RETENTION_SECONDS } from '../contract/retention.js';
import { modeId, modeOutputs, STACK_OUTPUTS } from '../contract/stack-outputs.js';
import {
  chargeOf,
  isFifoMode,
  MODE_NAMES,
  MODES,
  type Mode,
  type ModeSettings,
  STORAGE,
  TOPOLOGY_VERSION,
  VERIFIER,
} from '../contract/topology.js';
import { handlerEntry, PROJECT_ROOT } from './bundling.js';
import { NODEJS_BUNDLING } from './nodejs-bundling.js';
import { OutboxRelay } from './outbox-relay.js';
import { PaymentProvider } from './payment-provider.js';

export interface DeliverySemanticsStackProps extends StackProps {
  /** Crash injection and overrides of the topology, usually from CDK context. */
  readonly settings: DeploymentSettings;
}

/** What one mode deploys: its queue pair, its consumer, and the alarm on its DLQ. */
export interface ModeResources {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** In ALARM while the DLQ holds a visible message; notifies {@link DeliverySemanticsStack.alarmTopic}. */
  readonly deadLetterAlarm: cloudwatch.Alarm;
  readonly consumer: NodejsFunction;
  readonly settings: ModeSettings;
}

/**
 * The actions Powertools' DynamoDBPersistenceLayer sends: PutItem (INPROGRESS, conditional),
 * GetItem (the existing record, when the failed put did not return it), UpdateItem (COMPLETED),
 * DeleteItem (the INPROGRESS record of a call that threw, so a retry can run).
 */
export const IDEMPOTENCY_RECORD_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:GetItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
] as const;

/** One SQS queue + DLQ + consumer per mode of the topology, a shared ledger table, and the verifier. */
export class DeliverySemanticsStack extends Stack {
  public readonly table: dynamodb.Table;
  /** Powertools' idempotency records, for the modes with `idempotencyTable`; undefined if none has. */
  public readonly idempotencyTable: dynamodb.Table | undefined;
  public readonly modes: Readonly<Record<Mode, ModeResources>>;
  public readonly verifier: NodejsFunction;
  /** The one topic every DLQ alarm notifies (SSE with {@link alarmTopicKey}, TLS only). */
  public readonly alarmTopic: sns.Topic;
  /** The customer managed key of {@link alarmTopic}, used by nothing else. */
  public readonly alarmTopicKey: kms.Key;
  /** The stand-in payment provider the charge modes call; undefined if no mode has `charge`. */
  public readonly paymentProvider: PaymentProvider | undefined;
  /** The producing side's outbox, and the relay that publishes it to every mode's queue. */
  public readonly outbox: OutboxRelay;

  constructor(scope: Construct, id: string, props: DeliverySemanticsStackProps) {
    super(scope, id, props);

    this.table = new dynamodb.Table(this, 'Ledger', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: 'expiresAt',
      // A sandbox experiment: `cdk destroy` should leave nothing behind.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // Its own table, with Powertools' default attribute names (partition key `id`, TTL attribute
    // `expiration`), so the persistence layer needs no attribute options. Kept apart from the
    // ledger: the ledger's writes are bound to `RUN#…#MODE#…` partitions, Powertools' keys are not.
    this.idempotencyTable = MODE_NAMES.some((mode) => (MODES[mode] as ModeSettings).idempotencyTable)
      ? new dynamodb.Table(this, 'IdempotencyRecords', {
          partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
          billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
          pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
          timeToLiveAttribute: 'expiration',
          removalPolicy: RemovalPolicy.DESTROY,
        })
      : undefined;

    ({ topic: this.alarmTopic, key: this.alarmTopicKey } = this.addAlarmTopic(props.settings.alarmEmail));

    // Another company's API in real life; here a stand-in in the same account, behind a Function URL
    // with IAM auth, with its own table (docs/side-effects.md).
    this.paymentProvider = MODE_NAMES.some((mode) => chargeOf(mode))
      ? new PaymentProvider(this, 'PaymentProvider')
      : undefined;

    const modes = {} as Record<Mode, ModeResources>;
    for (const mode of MODE_NAMES) {
      modes[mode] = this.addMode(mode, resolveModeSettings(mode, props.settings), props.settings);
    }
    this.modes = modes;
    this.verifier = this.addVerifier();
    this.outbox = new OutboxRelay(this, 'Outbox', {
      queues: Object.fromEntries(MODE_NAMES.map((mode) => [mode, modes[mode].queue])),
      alarmTopic: this.alarmTopic,
      alarmNamePrefix: this.stackName,
    });

    const output = (key: string, value: string) => new CfnOutput(this, key, { value });
    output(STACK_OUTPUTS.tableName, this.table.tableName);
    output(STACK_OUTPUTS.verifierFunctionName, this.verifier.functionName);
    output(STACK_OUTPUTS.crashRate, String(props.settings.crashRate));
    output(STACK_OUTPUTS.crashSeed, props.settings.crashSeed);
    output(STACK_OUTPUTS.topologyVersion, TOPOLOGY_VERSION);
    output(STACK_OUTPUTS.alarmTopicArn, this.alarmTopic.topicArn);
    if (this.paymentProvider) output(STACK_OUTPUTS.paymentProviderUrl, this.paymentProvider.url);
    output(STACK_OUTPUTS.outboxTableName, this.outbox.outboxTable.tableName);
    output(STACK_OUTPUTS.producerStateTableName, this.outbox.stateTable.tableName);
    for (const mode of MODE_NAMES) {
      const { queue, deadLetterQueue, consumer, settings } = this.modes[mode];
      const keys = modeOutputs(mode);
      output(keys.queueUrl, queue.queueUrl);
      output(keys.deadLetterQueueUrl, deadLetterQueue.queueUrl);
      output(keys.functionName, consumer.functionName);
      output(keys.batchSize, String(settings.batchSize));
      output(keys.maxBatchingWindow, String(settings.maxBatchingWindowSeconds));
      output(keys.maxConcurrency, String(settings.maxConcurrency));
      output(keys.visibilityTimeout, String(settings.visibilityTimeoutSeconds));
      output(keys.maxReceiveCount, String(settings.maxReceiveCount));
    }
  }

  private addMode(mode: Mode, settings: ModeSettings, deployment: DeploymentSettings): ModeResources {
    const id = modeId(mode);
    // A FIFO mode's queue and DLQ are both FIFO (SQS refuses a standard DLQ for a FIFO queue);
    // CloudFormation generates their names with the `.fifo` suffix. Explicit deduplication ids (the event id),
    // deduplicated and throttled per message group (an account): SQS's high-throughput FIFO.
    const fifo: Partial<sqs.QueueProps> = isFifoMode(mode)
      ? {
          fifo: true,
          contentBasedDeduplication: false,
          deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
          fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        }
      : {};
    const deadLetterQueue = new sqs.Queue(this, `${id}DeadLetterQueue`, {
      ...fifo,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.seconds(DEAD_LETTER_RETENTION_SECONDS),
      maxMessageSizeBytes: STORAGE.maxMessageBytes,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const queue = new sqs.Queue(this, `${id}Queue`, {
      ...fifo,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(QUEUE_RETENTION_SECONDS),
      maxMessageSizeBytes: STORAGE.maxMessageBytes,
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
      removalPolicy: RemovalPolicy.DESTROY,
    });

    const idempotencyTable = settings.idempotencyTable ? this.idempotencyTable : undefined;
    const provider = settings.charge ? this.paymentProvider : undefined;
    const consumer = this.handlerFunction(`${id}Consumer`, mode, {
      timeoutSeconds: settings.functionTimeoutSeconds,
      memoryMb: settings.memoryMb,
      environment: consumerEnvironment(settings, {
        tableName: this.table.tableName,
        queueUrl: queue.queueUrl,
        crashRate: deployment.crashRate,
        crashSeed: deployment.crashSeed,
        markerTtlSeconds: deploymentRetention(deployment).markerTtlSeconds,
        ageGuard: true,
        ...(idempotencyTable ? { idempotencyTableName: idempotencyTable.tableName } : {}),
        ...(provider
          ? {
              provider: {
                url: provider.url,
                sign: true,
                lostResponseRate: deployment.providerLostResponseRate ?? 0,
              },
            }
          : {}),
      }),
    });
    this.allowWritesToOwnPartitionOnly(consumer, mode);
    // Wired just above (IDEMPOTENCY_TABLE_NAME), granted here: the table name never reaches a
    // function that may not use it, and a function that has it can.
    if (idempotencyTable) this.allowOwnIdempotencyRecordsOnly(consumer, idempotencyTable, mode);
    // Wired above (PROVIDER_URL): the two actions a Function URL with IAM auth requires, nothing more.
    provider?.grantCharge(consumer);

    consumer.addEventSource(
      new SqsEventSource(queue, {
        batchSize: settings.batchSize,
        ...(settings.maxBatchingWindowSeconds > 0
          ? { maxBatchingWindow: Duration.seconds(settings.maxBatchingWindowSeconds) }
          : {}),
        maxConcurrency: settings.maxConcurrency,
        reportBatchItemFailures: settings.reportBatchItemFailures,
      }),
    );

    if (!settings.deletesOwnBatch) this.denyDeleteFromFunctionCode(consumer, queue);

    const deadLetterAlarm = this.addDeadLetterAlarm(mode, deadLetterQueue);

    return { queue, deadLetterQueue, deadLetterAlarm, consumer, settings };
  }

  /** `<stack>-<mode>-dead-letters`: readable in the notification, and matched by the topic policy. */
  private deadLetterAlarmName(mode: Mode): string {
    return `${this.stackName}-${mode}-dead-letters`;
  }

  /**
   * The runbook (downstream outage → DLQ → alarm → fix → redrive) starts with someone being told.
   *
   * - `ApproximateNumberOfMessagesVisible` of the mode's DLQ (namespace AWS/SQS, dimension
   *   QueueName), `Maximum` over 60 s, ≥ 1, one datapoint out of one. SQS sends its metrics once a
   *   minute, so 60 s is the finest period that has data; `Maximum` because one message is enough;
   *   one of one because a dead-lettered message does not go away by itself (the DLQ keeps it 14
   *   days), so there is no noise to average out and no reason to wait: every message in a DLQ is
   *   an event a person must decide on (redrive, or not).
   * - `treatMissingData: notBreaching`. CloudWatch stops receiving SQS metrics for a queue that has
   *   been inactive (empty, untouched) for six hours; a DLQ that holds a message is not inactive.
   *   Missing data therefore means an empty, idle DLQ: OK, not INSUFFICIENT_DATA (an alarm that
   *   sits in INSUFFICIENT_DATA most of its life teaches people to ignore it), and never ALARM.
   * - The alarm action and the OK action go to the one topic: "a DLQ has messages", and later "it
   *   is empty again" (after the redrive, or a purge). The verifier reads the DLQs and releases
   *   what it read at once (visibility 0), so a minute's sample can rarely see 0 and send an OK
   *   followed by a second ALARM; that is noise on the topic, not a missed alarm.
   */
  private addDeadLetterAlarm(mode: Mode, deadLetterQueue: sqs.Queue): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, `${modeId(mode)}DeadLetterAlarm`, {
      alarmName: this.deadLetterAlarmName(mode),
      alarmDescription:
        `${mode}: its dead-letter queue holds messages. They exhausted maxReceiveCount: the handler ` +
        'failed on every receive (is the downstream table available?). Fix the cause, then redrive ' +
        '(docs/deploying.md, "When a DLQ alarm fires").',
      metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.alarmTopic));
    alarm.addOkAction(new SnsAction(this.alarmTopic));
    return alarm;
  }

  /**
   * One topic for every mode's DLQ alarm, encrypted with its own customer managed key, TLS only.
   *
   * Why a customer managed key: CloudWatch publishes alarm notifications as the service principal
   * `cloudwatch.amazonaws.com`, and to publish to an SSE topic it must be allowed `kms:Decrypt` and
   * `kms:GenerateDataKey*` on the topic's key in that key's policy. The AWS managed key
   * `alias/aws/sns` has a policy nobody can change, so a topic encrypted with it never receives
   * CloudWatch's notifications: the alarm fires and reaches no one.
   * Sources: Amazon SNS, "Enable compatibility between event sources from AWS services and
   * encrypted topics", https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services ;
   * the same rule for another service principal, with "you can't modify the AWS managed key for
   * Amazon SNS": https://docs.aws.amazon.com/sms-voice/latest/userguide/configuration-sets-sns-creating-role.html ;
   * CloudWatch, "Notifying users on alarm changes":
   * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Notify_Users_Alarm_Changes.html
   *
   * The key statement has no condition, as AWS's documented statement: the key encrypts this topic
   * and nothing else, so the grant lets CloudWatch encrypt and decrypt this topic's messages only.
   * (Scoping it with `kms:EncryptionContext:aws:sns:topicArn` would need the topic's ARN inside the
   * key's policy, a circular reference, or a fixed topic name.) The key rotates yearly.
   *
   * The topic policy: `enforceSSL` adds a Deny of `sns:Publish` when `aws:SecureTransport` is false.
   * A TopicPolicy replaces the topic's default policy, which is what let same-account principals
   * publish; so CloudWatch gets an explicit Allow, bound to this account (`aws:SourceAccount`) and
   * to this stack's alarms (`aws:SourceArn` = `…:alarm:<stack>-*`), as AWS's re:Post article on
   * alarms that do not notify shows: https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger
   */
  private addAlarmTopic(email: string | undefined): { topic: sns.Topic; key: kms.Key } {
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `${this.stackName}: encrypts the DLQ alarm topic; CloudWatch alarms may use it to publish`,
      enableKeyRotation: true,
      pendingWindow: Duration.days(7),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublishToTheEncryptedTopic',
        effect: iam.Effect.ALLOW,
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    const topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `${this.stackName}: dead-letter queue alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'ThisStacksAlarmsPublish',
        effect: iam.Effect.ALLOW,
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': this.account },
          ArnLike: {
            'aws:SourceArn': this.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: `${this.stackName}-*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    if (email !== undefined) topic.addSubscription(new EmailSubscription(email));
    return { topic, key };
  }

  /**
   * A consumer may write only items of its own mode's partition, `RUN#<runId>#MODE#<mode>` for any
   * run: not another mode's, and not a run's manifest (`RUN#<runId>#MANIFEST`, the producer's).
   *
   * Actions: TransactWriteItems is authorised per contained action (Put → PutItem, Update →
   * UpdateItem, ConditionCheck → ConditionCheckItem), with the same conditions as the plain call.
   * The consumers use Put and Update (the effectively-once marker is a conditional write in the
   * transaction, Put or Update) and plain UpdateItem for counters; no ConditionCheck, Delete or read.
   *
   * Condition: `dynamodb:LeadingKeys` is multivalued, so it takes a set operator. `ForAllValues`
   * (as in AWS's own LeadingKeys examples) requires every partition key the request touches to
   * match; `ForAnyValue` would let one matching key carry others. `ForAllValues` is also true when
   * the key is absent or empty, which in an Allow would let such a request through, so `Null: false`
   * requires the key to be present (conditions in one statement are ANDed). `StringLike`, not
   * `StringEquals`, because the run id varies: its `*` matches any characters, `#` included, so the
   * pattern matches exactly the keys ending in `#MODE#<mode>`. A run's manifest partition ends in
   * `#MANIFEST` and never matches; another mode's partition ends in `#MODE#<other>` and matches only
   * if `<other>` itself ends in `#MODE#<mode>`: mode names contain no `#` (nor the wildcards `*`
   * and `?`), so no mode's pattern matches another's, whatever their names' common suffixes
   * (`at-least-once`, `effectively-once` both end in `-once`; the `#MODE#` delimiter keeps them
   * apart). The infra tests check all of this against the synthesized template.
   */
  private allowWritesToOwnPartitionOnly(consumer: NodejsFunction, mode: Mode): void {
    consumer.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnModePartitionOnly',
        effect: iam.Effect.ALLOW,
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [partitionKey('*', mode)] },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      }),
    );
  }

  /**
   * Powertools keys its records `<keyPrefix>#<hash>`, and the handler's key prefix is its mode: the
   * same LeadingKeys rule as the ledger keeps one mode's function to its own records, should a
   * second mode ever share the table.
   */
  private allowOwnIdempotencyRecordsOnly(consumer: NodejsFunction, table: dynamodb.Table, mode: Mode): void {
    consumer.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'OwnIdempotencyRecordsOnly',
        effect: iam.Effect.ALLOW,
        actions: [...IDEMPOTENCY_RECORD_ACTIONS],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${mode}#*`] },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      }),
    );
  }

  /**
   * The event source mapping deletes with the function's role, so the role must allow
   * sqs:DeleteMessage. Calls made by the function's own code carry lambda:SourceFunctionArn; the
   * poller's do not. Denying on that key leaves Lambda able to acknowledge while the code cannot
   * delete: only at-most-once deletes from its own code.
   */
  private denyDeleteFromFunctionCode(consumer: NodejsFunction, queue: sqs.Queue): void {
    consumer.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'OnlyTheEventSourceMappingDeletes',
        effect: iam.Effect.DENY,
        actions: ['sqs:DeleteMessage'],
        resources: [queue.queueArn],
        conditions: {
          ArnLike: {
            'lambda:SourceFunctionArn': this.formatArn({
              service: 'lambda',
              resource: 'function',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
  }

  private addVerifier(): NodejsFunction {
    const verifier = this.handlerFunction('Verifier', 'verifier', {
      timeoutSeconds: VERIFIER.functionTimeoutSeconds,
      memoryMb: VERIFIER.memoryMb,
      environment: verifierEnvironment({
        tableName: this.table.tableName,
        deadLetterQueueUrls: Object.fromEntries(
          MODE_NAMES.map((mode) => [mode, this.modes[mode].deadLetterQueue.queueUrl]),
        ) as Record<Mode, string>,
        toJson: (value) => Stack.of(this).toJsonString(value),
        ...(this.paymentProvider ? { providerTableName: this.paymentProvider.table.tableName } : {}),
      }),
    });
    // The provider's ledger: Query only, to join the charges by event id.
    this.paymentProvider?.grantReadCharges(verifier);
    // Read-only on the ledger; on the DLQs it may receive and release (make visible again), never
    // delete. A FIFO DLQ shows one batch per group to a sweep: its message count, read with
    // GetQueueAttributes, bounds what the verifier may count as dead-lettered behind a gap.
    this.table.grant(verifier, 'dynamodb:Query', 'dynamodb:GetItem');
    for (const mode of MODE_NAMES) {
      this.modes[mode].deadLetterQueue.grant(
        verifier,
        'sqs:ReceiveMessage',
        'sqs:ChangeMessageVisibility',
        ...(isFifoMode(mode) ? ['sqs:GetQueueAttributes'] : []),
      );
    }
    return verifier;
  }

  /**
   * A handler bundled with local esbuild, on the pinned runtime, with its own log group and a role
   * that may write to that log group only (instead of the AWSLambdaBasicExecutionRole managed
   * policy, which allows every log group in the account).
   */
  private handlerFunction(
    id: string,
    entryName: string,
    options: {
      readonly timeoutSeconds: number;
      readonly memoryMb: number;
      readonly environment: Record<string, string>;
    },
  ): NodejsFunction {
    const logGroup = new logs.LogGroup(this, `${id}Logs`, {
      retention: logs.RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(this, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    logGroup.grantWrite(role);
    const fn = new NodejsFunction(this, id, {
      entry: handlerEntry(entryName),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      timeout: Duration.seconds(options.timeoutSeconds),
      memorySize: options.memoryMb,
      bundling: NODEJS_BUNDLING,
      logGroup,
      role,
      environment: options.environment,
    });
    Validations.of(fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'The runtime is pinned on purpose (nodejs24.x, the current Node LTS Lambda offers, with the esbuild target node24 in lib/bundling.ts): it is upgraded deliberately, never implicitly.',
    });
    return fn;
  }
}

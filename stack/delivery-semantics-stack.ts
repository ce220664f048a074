import { grantWriteOwnPartitions, LoggedFunction, SqsConsumer } from '@sqs-delivery-semantics/cdk-constructs';
import { ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  type DeploymentSettings,
  deployedModes,
  deploymentRetention,
  deploysOutboxRelay,
  deploysPaymentProvider,
  resolveModeSettings,
} from '../contract/deployment-settings.js';
import { consumerEnvironment, verifierEnvironment } from '../contract/function-environment.js';
import { partitionKey } from '../contract/ledger-keys.js';
import { DEAD_LETTER_RETENTION_SECONDS, QUEUE_RETENTION_SECONDS } from '../contract/retention.js';
import { modeId, modeOutputs, STACK_OUTPUTS, scalingOutput } from '../contract/stack-outputs.js';
import {
  isFifoMode,
  type Mode,
  type ModeSettings,
  STORAGE,
  settingsOf,
  TOPOLOGY_VERSION,
  VERIFIER,
} from '../contract/topology.js';
import { handlerEntry } from './bundling.js';
import { LAB_PACKAGING } from './nodejs-bundling.js';
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

/** What scales a mode's event source mapping: its maximum concurrency, or provisioned pollers. */
export function scalingOf(settings: ModeSettings, deployment: DeploymentSettings): string {
  return scalingOutput(settings.maxConcurrency, deployment.provisionedPollers);
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

/**
 * One {@link SqsConsumer} per deployed mode (`-c modes`, the default run's four unless told), a
 * shared ledger table, and the verifier; the payment provider with a charge mode, the outbox relay
 * when asked for (`-c outboxRelay=true`, or `-c modes=all`).
 */
export class DeliverySemanticsStack extends Stack {
  public readonly table: dynamodb.Table;
  /** Powertools' idempotency records, for the modes with `idempotencyTable`; undefined if none has. */
  public readonly idempotencyTable: dynamodb.Table | undefined;
  /** The deployed modes' resources (`-c modes`): a mode not deployed has none. */
  public readonly modes: Readonly<Partial<Record<Mode, ModeResources>>>;
  public readonly deployedModes: readonly Mode[];
  public readonly verifier: NodejsFunction;
  /** The one topic every DLQ alarm notifies (SSE with {@link alarmTopicKey}, TLS only). */
  public readonly alarmTopic: sns.Topic;
  /** The customer managed key of {@link alarmTopic}, used by nothing else. */
  public readonly alarmTopicKey: kms.Key;
  /** The stand-in payment provider the charge modes call; undefined if no mode has `charge`. */
  public readonly paymentProvider: PaymentProvider | undefined;
  /** The producing side's outbox, and the relay that publishes it to every deployed mode's queue; undefined unless asked for. */
  public readonly outbox: OutboxRelay | undefined;

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
    this.deployedModes = deployedModes(props.settings);
    this.idempotencyTable = this.deployedModes.some((mode) => settingsOf(mode).idempotencyTable)
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
    this.paymentProvider = deploysPaymentProvider(props.settings)
      ? new PaymentProvider(this, 'PaymentProvider')
      : undefined;

    const modes: Partial<Record<Mode, ModeResources>> = {};
    for (const mode of this.deployedModes) {
      modes[mode] = this.addMode(mode, resolveModeSettings(mode, props.settings), props.settings);
    }
    this.modes = modes;
    this.verifier = this.addVerifier();
    this.outbox = deploysOutboxRelay(props.settings)
      ? new OutboxRelay(this, 'Outbox', {
          queues: Object.fromEntries(this.deployedModes.map((mode) => [mode, this.resourcesOf(mode).queue])),
          alarmTopic: this.alarmTopic,
          alarmNamePrefix: this.stackName,
        })
      : undefined;

    const output = (key: string, value: string) => new CfnOutput(this, key, { value });
    output(STACK_OUTPUTS.tableName, this.table.tableName);
    output(STACK_OUTPUTS.verifierFunctionName, this.verifier.functionName);
    output(STACK_OUTPUTS.crashRate, String(props.settings.crashRate));
    output(STACK_OUTPUTS.crashSeed, props.settings.crashSeed);
    output(STACK_OUTPUTS.topologyVersion, TOPOLOGY_VERSION);
    output(STACK_OUTPUTS.alarmTopicArn, this.alarmTopic.topicArn);
    output(STACK_OUTPUTS.deployedModes, this.deployedModes.join(','));
    if (this.paymentProvider) output(STACK_OUTPUTS.paymentProviderUrl, this.paymentProvider.url);
    if (this.outbox) {
      output(STACK_OUTPUTS.outboxTableName, this.outbox.outboxTable.tableName);
      output(STACK_OUTPUTS.producerStateTableName, this.outbox.stateTable.tableName);
    }
    for (const mode of this.deployedModes) {
      const { queue, deadLetterQueue, consumer, settings } = this.resourcesOf(mode);
      const keys = modeOutputs(mode);
      output(keys.queueUrl, queue.queueUrl);
      output(keys.deadLetterQueueUrl, deadLetterQueue.queueUrl);
      output(keys.functionName, consumer.functionName);
      output(keys.batchSize, String(settings.batchSize));
      output(keys.maxBatchingWindow, String(settings.maxBatchingWindowSeconds));
      // Which of the two scales the mapping: maximum concurrency, or provisioned pollers instead.
      output(keys.scaling, scalingOf(settings, props.settings));
      if (!props.settings.provisionedPollers) output(keys.maxConcurrency, String(settings.maxConcurrency));
      output(keys.visibilityTimeout, String(settings.visibilityTimeoutSeconds));
      output(keys.maxReceiveCount, String(settings.maxReceiveCount));
    }
  }

  /** A deployed mode's resources. */
  resourcesOf(mode: Mode): ModeResources {
    const resources = this.modes[mode];
    if (!resources) throw new Error(`${mode} is not deployed in ${this.stackName} (-c modes)`);
    return resources;
  }

  private addMode(mode: Mode, settings: ModeSettings, deployment: DeploymentSettings): ModeResources {
    const idempotencyTable = settings.idempotencyTable ? this.idempotencyTable : undefined;
    const provider = settings.charge ? this.paymentProvider : undefined;
    const consumer = new SqsConsumer(this, modeId(mode), {
      packaging: LAB_PACKAGING,
      // A sandbox experiment: `cdk destroy` removes the queues, the DLQ and the log group too
      // (SqsConsumer retains them by default).
      removalPolicy: RemovalPolicy.DESTROY,
      entry: handlerEntry(mode),
      fifo: isFifoMode(mode),
      batchSize: settings.batchSize,
      maxBatchingWindow: Duration.seconds(settings.maxBatchingWindowSeconds),
      timeout: Duration.seconds(settings.functionTimeoutSeconds),
      visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
      maxReceiveCount: settings.maxReceiveCount,
      ...(deployment.provisionedPollers
        ? { provisionedPollers: deployment.provisionedPollers }
        : { maxConcurrency: settings.maxConcurrency }),
      reportBatchItemFailures: settings.reportBatchItemFailures,
      deletesOwnBatch: settings.deletesOwnBatch,
      memorySize: settings.memoryMb,
      retentionPeriod: Duration.seconds(QUEUE_RETENTION_SECONDS),
      deadLetterRetentionPeriod: Duration.seconds(DEAD_LETTER_RETENTION_SECONDS),
      maxMessageSizeBytes: STORAGE.maxMessageBytes,
      environment: (queue) =>
        consumerEnvironment(settings, {
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
      // The runbook (downstream outage → DLQ → alarm → fix → redrive) starts with someone being
      // told: `<stack>-<mode>-dead-letters`, readable in the notification and matched by the topic policy.
      alarmTopic: this.alarmTopic,
      alarmName: `${this.stackName}-${mode}-dead-letters`,
      alarmDescription:
        `${mode}: its dead-letter queue holds messages. They exhausted maxReceiveCount: the handler ` +
        'failed on every receive (is the downstream table available?). Fix the cause, then redrive ' +
        '(docs/deploying.md, "When a DLQ alarm fires").',
    });
    const fn = consumer.fn;
    this.allowWritesToOwnPartitionOnly(fn, mode);
    // Wired just above (IDEMPOTENCY_TABLE_NAME), granted here: the table name never reaches a
    // function that may not use it, and a function that has it can.
    if (idempotencyTable) this.allowOwnIdempotencyRecordsOnly(fn, idempotencyTable, mode);
    // Wired above (PROVIDER_URL): the two actions a Function URL with IAM auth requires, nothing more.
    provider?.grantCharge(fn);
    return {
      queue: consumer.queue,
      deadLetterQueue: consumer.deadLetterQueue,
      deadLetterAlarm: consumer.deadLetterAlarm,
      consumer: fn,
      settings,
    };
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
   * Condition ({@link grantWriteOwnPartitions}, whose TSDoc cites AWS): `ForAllValues:StringLike` on
   * `dynamodb:LeadingKeys` (every partition key the request touches must match) and `Null: false`
   * (a request without a key, a Scan, does not pass vacuously). `StringLike`, not
   * `StringEquals`, because the run id varies: its `*` matches any characters, `#` included, so the
   * pattern matches exactly the keys ending in `#MODE#<mode>`. A run's manifest partition ends in
   * `#MANIFEST` and never matches; another mode's partition ends in `#MODE#<other>` and matches only
   * if `<other>` itself ends in `#MODE#<mode>`: mode names contain no `#` (nor the wildcards `*`
   * and `?`), so no mode's pattern matches another's, whatever their names' common suffixes
   * (`at-least-once`, `effectively-once` both end in `-once`; the `#MODE#` delimiter keeps them
   * apart). The infra tests check all of this against the synthesized template.
   */
  private allowWritesToOwnPartitionOnly(consumer: NodejsFunction, mode: Mode): void {
    grantWriteOwnPartitions(this.table, consumer, {
      leadingKeys: [partitionKey('*', mode)],
      actions: [
        ...(settingsOf(mode).readsOwnPartition ? ['dynamodb:GetItem'] : []),
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ],
      sid: 'WriteOwnModePartitionOnly',
    });
  }

  /**
   * Powertools keys its records `<keyPrefix>#<hash>`, and the handler's key prefix is its mode: the
   * same LeadingKeys rule as the ledger keeps one mode's function to its own records, should a
   * second mode ever share the table.
   */
  private allowOwnIdempotencyRecordsOnly(consumer: NodejsFunction, table: dynamodb.Table, mode: Mode): void {
    grantWriteOwnPartitions(table, consumer, {
      leadingKeys: [`${mode}#*`],
      actions: IDEMPOTENCY_RECORD_ACTIONS,
      sid: 'OwnIdempotencyRecordsOnly',
    });
  }

  private addVerifier(): NodejsFunction {
    const verifier = new LoggedFunction(this, 'Verifier', {
      ...LAB_PACKAGING,
      // A sandbox: `cdk destroy` removes its log group too (LoggedFunction retains by default).
      logGroupRemovalPolicy: RemovalPolicy.DESTROY,
      entry: handlerEntry('verifier'),
      timeout: Duration.seconds(VERIFIER.functionTimeoutSeconds),
      memorySize: VERIFIER.memoryMb,
      environment: verifierEnvironment({
        tableName: this.table.tableName,
        deadLetterQueueUrls: Object.fromEntries(
          this.deployedModes.map((mode) => [mode, this.resourcesOf(mode).deadLetterQueue.queueUrl]),
        ),
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
    for (const mode of this.deployedModes) {
      this.resourcesOf(mode).deadLetterQueue.grant(
        verifier,
        'sqs:ReceiveMessage',
        'sqs:ChangeMessageVisibility',
        ...(isFifoMode(mode) ? ['sqs:GetQueueAttributes'] : []),
      );
    }
    return verifier;
  }
}

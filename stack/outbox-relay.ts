import { LoggedFunction } from '@sqs-delivery-semantics/cdk-constructs';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { TTL_ATTRIBUTE } from '../contract/ledger-keys.js';
import { DEAD_LETTER_RETENTION_SECONDS } from '../contract/retention.js';
import { isFifoMode, type Mode, STORAGE } from '../contract/topology.js';
import { handlerEntry } from './bundling.js';
import { LAB_PACKAGING } from './nodejs-bundling.js';

export interface OutboxRelayProps {
  /** The queues the relay publishes every outbox item to, by mode (a FIFO mode's queue must be FIFO). */
  readonly queues: Readonly<Partial<Record<Mode, sqs.IQueue>>>;
  /** Records per invocation. @default 100 */
  readonly batchSize?: number;
  /**
   * Retries of a failing batch before its records go to {@link OutboxRelay.failureQueue}. Bisecting
   * a batch does not count against it. @default 3
   */
  readonly retryAttempts?: number;
  /**
   * Records older than this go to {@link OutboxRelay.failureQueue} instead of being retried: a
   * record that keeps failing blocks its shard (the relay keeps order), at most this long, not for
   * the stream's 24 h retention. @default 1 hour
   */
  readonly maxRecordAge?: Duration;
  /** The iterator age (how far behind the stream the relay is) that alarms. @default 5 minutes */
  readonly iteratorAgeThreshold?: Duration;
  /** Where the alarms notify (ALARM and OK). @default none: the alarms only change state */
  readonly alarmTopic?: sns.ITopic;
  /**
   * The alarms' names start with it (`<prefix>-outbox-relay-behind`, `<prefix>-outbox-relay-failures`):
   * the stack's alarm topic lets only alarms named after the stack publish.
   * @default CloudFormation's generated names
   */
  readonly alarmNamePrefix?: string;
}

const DEFAULTS = {
  batchSize: 100,
  retryAttempts: 3,
  maxRecordAge: Duration.hours(1),
  iteratorAgeThreshold: Duration.minutes(5),
} as const;

/**
 * The producing side's transactional outbox: the service's state table and its outbox table
 * (written together in one TransactWriteItems), and the relay that publishes each new outbox item
 * to every mode's queue from the outbox table's stream (services/outbox/relay.ts).
 *
 * The mapping keeps order per shard (parallelization factor 1), retries from the first record the
 * relay reports as failed, bisects a failing batch to isolate a bad record, and gives up on a
 * record after {@link OutboxRelayProps.retryAttempts} retries or {@link OutboxRelayProps.maxRecordAge},
 * sending its description to the on-failure queue: one bad record cannot block the shard for a day.
 */
export class OutboxRelay extends Construct {
  /** Outbox items, one per event (partition: run and account; sort: production order); stream NEW_IMAGE. */
  public readonly outboxTable: dynamodb.Table;
  /** The producing service's own state (an account's pending balance), written in the same transaction. */
  public readonly stateTable: dynamodb.Table;
  public readonly relay: NodejsFunction;
  /** Descriptions of stream batches the relay gave up on (Lambda's on-failure destination). */
  public readonly failureQueue: sqs.Queue;
  /** In ALARM while the relay is more than the threshold behind the stream. */
  public readonly iteratorAgeAlarm: cloudwatch.Alarm;
  /** In ALARM while the on-failure queue holds a message: events that reached no queue. */
  public readonly failureAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: OutboxRelayProps) {
    super(scope, id);
    const targets = Object.entries(props.queues).filter(
      (entry): entry is [Mode, sqs.IQueue] => entry[1] !== undefined,
    );
    if (targets.length === 0) throw new Error('OutboxRelay: queues must name at least one mode');
    for (const [mode, queue] of targets) {
      if (queue.fifo !== isFifoMode(mode)) {
        throw new Error(
          `OutboxRelay: ${mode} is ${isFifoMode(mode) ? '' : 'not '}a FIFO mode, but its queue is ${queue.fifo ? '' : 'not '}FIFO`,
        );
      }
    }

    // Two tables: the outbox stream then carries outbox items only, and the state needs no stream.
    this.outboxTable = this.table('Outbox', dynamodb.StreamViewType.NEW_IMAGE);
    this.stateTable = this.table('ProducerState');

    this.failureQueue = new sqs.Queue(this, 'RelayFailures', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.seconds(DEAD_LETTER_RETENTION_SECONDS),
      maxMessageSizeBytes: STORAGE.maxMessageBytes,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(this.failureQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination (on-failure) of the relay’s stream mapping; nothing consumes it, so it needs no DLQ of its own.',
    });

    this.relay = this.relayFunction(targets);
    this.allowSendOnly(targets);
    this.relay.addEventSource(
      new DynamoEventSource(this.outboxTable, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: props.batchSize ?? DEFAULTS.batchSize,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: props.retryAttempts ?? DEFAULTS.retryAttempts,
        maxRecordAge: props.maxRecordAge ?? DEFAULTS.maxRecordAge,
        // One batch per shard at a time: the order the producer committed, per account.
        parallelizationFactor: 1,
        onFailure: new SqsDlq(this.failureQueue),
        // TTL deletions and updates announce nothing: they never invoke the relay.
        filters: [lambda.FilterCriteria.filter({ eventName: lambda.FilterRule.isEqual('INSERT') })],
      }),
    );
    // The mapping's own grant: dynamodb:ListStreams, which has no resource-level permissions.
    // On the role: its default policy holds the mapping's grants.
    Validations.of(this.relay.role ?? this.relay).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams does not support resource-level permissions (Service Authorization Reference), so Lambda’s stream mapping needs it on "*"; the stream itself is read with DescribeStream, GetRecords and GetShardIterator on this table’s stream ARN only.',
    });

    const alarmName = (suffix: string) =>
      props.alarmNamePrefix === undefined ? {} : { alarmName: `${props.alarmNamePrefix}-${suffix}` };
    this.iteratorAgeAlarm = new cloudwatch.Alarm(this, 'IteratorAgeAlarm', {
      ...alarmName('outbox-relay-behind'),
      alarmDescription:
        'The outbox relay is behind the outbox table’s stream: a record keeps failing (see its logs and the on-failure queue) or it cannot keep up. Past 24 h the stream drops records: events committed and never published.',
      metric: this.relay.metric('IteratorAge', {
        period: Duration.minutes(1),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: (props.iteratorAgeThreshold ?? DEFAULTS.iteratorAgeThreshold).toMilliseconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      // IteratorAge exists only while the relay is invoked: no records, no lag.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.failureAlarm = new cloudwatch.Alarm(this, 'FailureAlarm', {
      ...alarmName('outbox-relay-failures'),
      alarmDescription:
        'The outbox relay gave up on stream records: their events were committed and reached no queue. Each message names a shard and sequence range; republish from the outbox table.',
      metric: this.failureQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (props.alarmTopic) {
      for (const alarm of [this.iteratorAgeAlarm, this.failureAlarm]) {
        alarm.addAlarmAction(new SnsAction(props.alarmTopic));
        alarm.addOkAction(new SnsAction(props.alarmTopic));
      }
    }
  }

  private table(id: string, stream?: dynamodb.StreamViewType): dynamodb.Table {
    return new dynamodb.Table(this, id, {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TTL_ATTRIBUTE,
      ...(stream ? { stream } : {}),
      removalPolicy: RemovalPolicy.DESTROY,
    });
  }

  /** Bundled and deployed like the stack's handlers: local esbuild, pinned runtime, its own log group and role. */
  private relayFunction(targets: readonly (readonly [Mode, sqs.IQueue])[]): NodejsFunction {
    const fn = new LoggedFunction(this, 'Relay', {
      ...LAB_PACKAGING,
      // A sandbox: `cdk destroy` removes its log group too (LoggedFunction retains by default).
      logGroupRemovalPolicy: RemovalPolicy.DESTROY,
      entry: handlerEntry('outbox-relay'),
      timeout: Duration.seconds(30),
      memorySize: 256,
      environment: {
        QUEUE_URLS: Stack.of(this).toJsonString(
          Object.fromEntries(targets.map(([mode, queue]) => [mode, queue.queueUrl])),
        ),
      },
    });
    return fn;
  }

  /**
   * sqs:SendMessage (SendMessageBatch is authorised as SendMessage) on the given queues only: not
   * GetQueueAttributes or GetQueueUrl, which grantSendMessages adds and the relay never calls. A
   * queue encrypted with a KMS key needs the key too.
   */
  private allowSendOnly(targets: readonly (readonly [Mode, sqs.IQueue])[]): void {
    this.relay.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'PublishToTheModeQueuesOnly',
        effect: iam.Effect.ALLOW,
        actions: ['sqs:SendMessage'],
        resources: targets.map(([, queue]) => queue.queueArn),
      }),
    );
    for (const [, queue] of targets) {
      queue.encryptionMasterKey?.grant(this.relay, 'kms:GenerateDataKey', 'kms:Decrypt');
    }
  }
}

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { OutboxRelay } from '../../stack/outbox-relay.js';

function queuesOf(stack: Stack) {
  return {
    'at-least-once': new sqs.Queue(stack, 'Standard', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: {
        maxReceiveCount: 3,
        queue: new sqs.Queue(stack, 'StandardDlq', {
          encryption: sqs.QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
        }),
      },
    }),
    'fifo-versioned': new sqs.Queue(stack, 'Fifo', {
      fifo: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: {
        maxReceiveCount: 3,
        queue: new sqs.Queue(stack, 'FifoDlq', {
          fifo: true,
          encryption: sqs.QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
        }),
      },
    }),
  };
}

function build(app: App) {
  const stack = new Stack(app, 'OutboxTest');
  const queues = queuesOf(stack);
  const relay = new OutboxRelay(stack, 'Outbox', { queues });
  return { stack, queues, relay };
}

function synth() {
  const built = build(new App({ context: { 'aws:cdk:bundling-stacks': [] } }));
  return { ...built, template: Template.fromStack(built.stack) };
}

describe('OutboxRelay', () => {
  let template: Template;
  let stack: Stack;
  let relay: OutboxRelay;
  let queues: ReturnType<typeof queuesOf>;
  const ref = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as never);

  beforeAll(() => {
    ({ template, stack, relay, queues } = synth());
  });

  it('streams the outbox table’s new items; the state table has no stream; both on demand, PITR, TTL', () => {
    const tables = template.findResources('AWS::DynamoDB::Table');
    expect(Object.keys(tables)).toHaveLength(2);
    expect(tables[ref(relay.outboxTable)]?.Properties.StreamSpecification).toEqual({
      StreamViewType: 'NEW_IMAGE',
    });
    expect(tables[ref(relay.stateTable)]?.Properties.StreamSpecification).toBeUndefined();
    for (const table of Object.values(tables)) {
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      });
    }
  });

  it('maps the stream to the relay from the trim horizon, bisecting, reporting item failures, bounded, with an on-failure queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [ref(relay.outboxTable), 'StreamArn'] },
      FunctionName: { Ref: ref(relay.relay) },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: 3,
      MaximumRecordAgeInSeconds: 3600,
      ParallelizationFactor: 1,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [ref(relay.failureQueue), 'Arn'] } },
      },
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] },
    });
  });

  it('keeps a record’s retries within the stream’s 24 h retention by default and when configured', () => {
    const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))[0];
    expect(mapping?.Properties.MaximumRecordAgeInSeconds).toBeLessThan(24 * 3600);
    const custom = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Custom');
    new OutboxRelay(custom, 'Outbox', {
      queues: { 'at-least-once': new sqs.Queue(custom, 'Q') },
      retryAttempts: 5,
      maxRecordAge: Duration.minutes(10),
    });
    Template.fromStack(custom).hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      MaximumRetryAttempts: 5,
      MaximumRecordAgeInSeconds: 600,
    });
  });

  it('names the queues in QUEUE_URLS by mode', () => {
    const fn = template.findResources('AWS::Lambda::Function')[ref(relay.relay)];
    const urls = JSON.stringify(stack.resolve(fn?.Properties.Environment.Variables.QUEUE_URLS));
    expect(urls).toContain('at-least-once');
    expect(urls).toContain('fifo-versioned');
    expect(urls).toContain(ref(queues['at-least-once']));
    expect(urls).toContain(ref(queues['fifo-versioned']));
  });

  it('may send to the given queues and nothing else on them; reads only its table’s stream', () => {
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as Record<string, unknown>[],
    );
    const actions = (statement: Record<string, unknown>) => [statement.Action].flat() as string[];
    const sqsStatements = statements.filter((statement) =>
      actions(statement).some((a) => a.startsWith('sqs:')),
    );
    const onQueue = (queue: sqs.Queue) =>
      sqsStatements.filter((statement) => JSON.stringify(statement.Resource).includes(`"${ref(queue)}"`));
    for (const queue of Object.values(queues)) {
      expect(onQueue(queue).flatMap(actions)).toEqual(['sqs:SendMessage']);
    }
    // Lambda's own SqsDlq grant, on the failure queue only.
    expect(onQueue(relay.failureQueue).flatMap(actions)).toContain('sqs:SendMessage');
    const dynamoActions = statements.flatMap((statement) =>
      actions(statement).filter((a) => a.startsWith('dynamodb:')),
    );
    expect(dynamoActions.sort()).toEqual([
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ]);
    expect(
      statements.some((statement) => actions(statement).some((a) => a === '*' || a.endsWith(':*'))),
    ).toBe(false);
  });

  it('alarms on the relay’s IteratorAge and on the on-failure queue', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: ref(relay.relay) } }],
      Statistic: 'Maximum',
      Threshold: 300_000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ref(relay.failureQueue), 'QueueName'] } }],
      Threshold: 1,
    });
  });

  it('encrypts the on-failure queue and refuses plain HTTP to it', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: Match.anyValue(),
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: ref(relay.failureQueue) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('refuses a FIFO mode on a standard queue, and no queue at all', () => {
    const stack = new Stack(new App(), 'Wrong');
    expect(
      () => new OutboxRelay(stack, 'Outbox', { queues: { 'fifo-versioned': new sqs.Queue(stack, 'Q') } }),
    ).toThrow(/FIFO/);
    expect(() => new OutboxRelay(stack, 'Empty', { queues: {} })).toThrow(/at least one mode/);
  });

  it('passes cdk-nag’s AWS Solutions rules (each acknowledgement with its reason)', () => {
    const app = new App({
      context: { 'aws:cdk:bundling-stacks': [] },
      outdir: mkdtempSync(join(tmpdir(), 'nag-outbox-')),
    });
    build(app);
    // Before the first synth: a Template would synthesize the app without the rules, and app.synth()
    // would then return that assembly unchecked.
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
  });
});

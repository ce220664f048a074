import { readFileSync } from 'node:fs';
import { SqsConsumer, type SqsConsumerProps } from '@sqs-delivery-semantics/cdk-constructs';
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { CONSUMER_DEFAULTS } from '../../contract/topology.js';
import { handlerEntry, PROJECT_ROOT } from '../../stack/bundling.js';

/** One consumer alone in a stack, bundling skipped (test/infra/synth.test.ts bundles for real). */
function consumerTemplate(props: Partial<SqsConsumerProps> = {}): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Consumer');
  new SqsConsumer(stack, 'Orders', { entry: handlerEntry('at-least-once'), ...props });
  return Template.fromStack(stack);
}

const count = (template: Template, type: string) => Object.keys(template.findResources(type)).length;

describe('SqsConsumer (packages/cdk-constructs/src/sqs-consumer.ts)', () => {
  it("defaults to the topology's consumer settings, written as literals in its Props", () => {
    const template = consumerTemplate();
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: CONSUMER_DEFAULTS.batchSize,
      ScalingConfig: { MaximumConcurrency: CONSUMER_DEFAULTS.maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumBatchingWindowInSeconds: Match.absent(),
      ProvisionedPollerConfig: Match.absent(),
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: CONSUMER_DEFAULTS.functionTimeoutSeconds,
      MemorySize: CONSUMER_DEFAULTS.memoryMb,
      Runtime: 'nodejs24.x',
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: CONSUMER_DEFAULTS.visibilityTimeoutSeconds,
      RedrivePolicy: { maxReceiveCount: CONSUMER_DEFAULTS.maxReceiveCount },
    });
    expect(CONSUMER_DEFAULTS.maxBatchingWindowSeconds).toBe(0);
    // Its code may not delete: only the mapping acknowledges.
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sqs:DeleteMessage',
            Sid: 'OnlyTheEventSourceMappingDeletes',
          }),
        ]),
      },
    });
    expect(count(template, 'AWS::CloudWatch::Alarm')).toBe(1);
    expect(count(template, 'AWS::Logs::LogGroup')).toBe(1);
  });

  it('with provisioned pollers: ProvisionedPollerConfig instead of maximum concurrency', () => {
    const template = consumerTemplate({ provisionedPollers: { minimumPollers: 2, maximumPollers: 10 } });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ProvisionedPollerConfig: { MinimumPollers: 2, MaximumPollers: 10 },
      ScalingConfig: Match.absent(),
    });
  });

  it("leaves the refusal of bad pollers to aws-cdk-lib's validation, at synth", () => {
    const pollers = (minimumPollers: number, maximumPollers: number) => () =>
      consumerTemplate({ provisionedPollers: { minimumPollers, maximumPollers } });
    expect(pollers(10, 2)).toThrow(
      'Minimum provisioned pollers must be less than or equal to maximum provisioned pollers, got: min=10, max=2',
    );
    expect(pollers(1, 10)).toThrow(
      'Minimum provisioned pollers for SQS must be between 2 and 200 inclusive, got: 1',
    );
    // aws-cdk-lib 2.276.0 enforces 2,000 as the SQS maximum (one AWS page says 10,000).
    expect(pollers(2, 2001)).toThrow(
      'Maximum provisioned pollers for SQS must be between 2 and 2000 inclusive, got: 2001',
    );
    expect(pollers(2, 2000)).not.toThrow();
    expect(() =>
      consumerTemplate({ maxConcurrency: 5, provisionedPollers: { minimumPollers: 2, maximumPollers: 10 } }),
    ).toThrow('provisionedPollerConfig and maxConcurrency are mutually exclusive');
  });

  it('on FIFO: a FIFO pair, deduplicated and throttled per message group', () => {
    const template = consumerTemplate({ fifo: true, maxBatchingWindow: Duration.seconds(0) });
    template.resourcePropertiesCountIs(
      'AWS::SQS::Queue',
      { FifoQueue: true, DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' },
      2,
    );
  });
});

describe('SqsConsumer: the queue pair, the grants and the alarm', () => {
  it('encrypts both queues with SSE-SQS, refuses them without TLS, and redrives to its DLQ', () => {
    const consumer = new SqsConsumer(
      new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'C'),
      'Orders',
      {
        entry: handlerEntry('at-least-once'),
      },
    );
    const template = Template.fromStack(Stack.of(consumer));
    template.resourcePropertiesCountIs('AWS::SQS::Queue', { SqsManagedSseEnabled: true }, 2);
    // A dead letter waits for a person: 14 days, SQS's longest.
    template.hasResourceProperties('AWS::SQS::Queue', { MessageRetentionPeriod: 14 * 24 * 3600 });
    const stack = Stack.of(consumer);
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: {
        deadLetterTargetArn: {
          'Fn::GetAtt': [stack.getLogicalId(consumer.deadLetterQueue.node.defaultChild as never), 'Arn'],
        },
      },
    });
    const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy'));
    expect(policies).toHaveLength(2);
    for (const policy of policies) {
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  it('derives the visibility timeout from the function timeout (6 ×), and refuses one shorter than it', () => {
    consumerTemplate({ timeout: Duration.seconds(60) }).hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 360,
    });
    expect(() =>
      consumerTemplate({ timeout: Duration.seconds(60), visibilityTimeout: Duration.seconds(30) }),
    ).toThrow('SqsConsumer Orders: visibilityTimeout 30 s is shorter than the function timeout 60 s');
  });

  it('lets a handler that deletes its own batch delete, and reports no batch item failures when asked not to', () => {
    const template = consumerTemplate({ deletesOwnBatch: true, reportBatchItemFailures: false });
    const denies = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Effect: string }[])
      .filter((statement) => statement.Effect === 'Deny');
    expect(denies).toEqual([]);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: Match.absent(),
    });
  });

  it('alarms on one visible dead letter, and notifies the topic it is given on ALARM and OK', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'C');
    const topic = new sns.Topic(stack, 'Oncall');
    new SqsConsumer(stack, 'Orders', {
      entry: handlerEntry('at-least-once'),
      alarmTopic: topic,
      alarmName: 'orders-dead-letters',
    });
    const topicRef = { Ref: stack.getLogicalId(topic.node.defaultChild as never) };
    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'orders-dead-letters',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmActions: [topicRef],
      OKActions: [topicRef],
    });
  });

  /** DeletionPolicy and UpdateReplacePolicy of the queue, the DLQ and the function's log group. */
  function removalPoliciesOf(props: Partial<SqsConsumerProps>): Record<string, [unknown, unknown]> {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'C');
    const consumer = new SqsConsumer(stack, 'Orders', { entry: handlerEntry('at-least-once'), ...props });
    const resources = Template.fromStack(stack).toJSON().Resources;
    const policiesOf = (construct: { node: { defaultChild?: unknown } }): [unknown, unknown] => {
      const resource = resources[stack.getLogicalId(construct.node.defaultChild as never)];
      return [resource?.DeletionPolicy, resource?.UpdateReplacePolicy];
    };
    return {
      queue: policiesOf(consumer.queue),
      deadLetterQueue: policiesOf(consumer.deadLetterQueue),
      // The TLS-only queue policies: a retained queue must keep its own.
      queuePolicy: policiesOf(consumer.queue.node.findChild('Policy') as never),
      deadLetterQueuePolicy: policiesOf(consumer.deadLetterQueue.node.findChild('Policy') as never),
      logGroup: policiesOf(consumer.fn.functionLogGroup),
    };
  }

  it('retains the queue, the DLQ and the log group by default: a deleted or replaced stack keeps the dead letters', () => {
    const retained = {
      queue: ['Retain', 'Retain'],
      deadLetterQueue: ['Retain', 'Retain'],
      queuePolicy: ['Retain', 'Retain'],
      deadLetterQueuePolicy: ['Retain', 'Retain'],
      logGroup: ['Retain', 'Retain'],
    };
    expect(removalPoliciesOf({})).toEqual(retained);
    expect(removalPoliciesOf({ fifo: true })).toEqual(retained);
  });

  it('deletes all three with the stack when given RemovalPolicy.DESTROY (a sandbox)', () => {
    expect(removalPoliciesOf({ removalPolicy: RemovalPolicy.DESTROY })).toEqual({
      queue: ['Delete', 'Delete'],
      deadLetterQueue: ['Delete', 'Delete'],
      queuePolicy: ['Delete', 'Delete'],
      deadLetterQueuePolicy: ['Delete', 'Delete'],
      logGroup: ['Delete', 'Delete'],
    });
  });

  it("says in its Props' @default comments what the topology's consumer defaults are", () => {
    const source = readFileSync(`${PROJECT_ROOT}packages/cdk-constructs/src/sqs-consumer.ts`, 'utf8');
    /** The `@default` line of a prop: the comment block right above `readonly <prop>?`. */
    const documented = (prop: string) => {
      const end = source.indexOf(`readonly ${prop}?:`);
      const block = source.slice(source.lastIndexOf('/**', end), end);
      return /@default (.*?)(?: \*\/)?$/m.exec(block)?.[1] ?? '';
    };
    expect(documented('batchSize')).toBe(String(CONSUMER_DEFAULTS.batchSize));
    expect(documented('maxBatchingWindow')).toBe(
      `Duration.seconds(${CONSUMER_DEFAULTS.maxBatchingWindowSeconds})`,
    );
    expect(documented('timeout')).toBe(`Duration.seconds(${CONSUMER_DEFAULTS.functionTimeoutSeconds})`);
    expect(documented('visibilityTimeout')).toContain(
      `Duration.seconds(${CONSUMER_DEFAULTS.visibilityTimeoutSeconds})`,
    );
    expect(documented('maxReceiveCount')).toBe(String(CONSUMER_DEFAULTS.maxReceiveCount));
    expect(documented('maxConcurrency')).toMatch(new RegExp(`^${CONSUMER_DEFAULTS.maxConcurrency}\\b`));
    expect(documented('memorySize')).toBe(String(CONSUMER_DEFAULTS.memoryMb));
    expect(documented('removalPolicy')).toBe('RemovalPolicy.RETAIN');
    expect(CONSUMER_DEFAULTS.visibilityTimeoutSeconds).toBe(6 * CONSUMER_DEFAULTS.functionTimeoutSeconds);
  });
});

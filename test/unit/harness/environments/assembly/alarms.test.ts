import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type AlarmDefinition,
  type AlarmState,
  alarmsOf,
  evaluate,
  localAlarmsOf,
  type QueueAttribute,
  watchAlarms,
} from '../../../../../harness/environments/assembly/alarms.js';
import type { Template } from '../../../../../harness/environments/assembly/cloud-assembly.js';
import { UnsupportedTemplateError } from '../../../../../harness/environments/assembly/intrinsics.js';
import {
  type ResolvedStack,
  resolveStack,
  type StackScope,
} from '../../../../../harness/environments/assembly/resolve-stack.js';

const ACCOUNT = '000000000000';
const scope: StackScope = {
  account: ACCOUNT,
  region: 'us-east-1',
  salt: 'unit',
  queueUrl: (name) => `http://127.0.0.1:9324/${ACCOUNT}/${name}`,
  functionUrl: (name) => `http://127.0.0.1:9000/lambda-url/${name}/`,
};

/**
 * A DLQ alarm as `cdk synth` writes it (DeliverySemantics.template.json, the four default modes'
 * alarms differ only in their names and queues), with `overrides`.
 */
function alarmTemplate(overrides: Record<string, unknown> = {}): Template {
  return {
    Resources: {
      DeadLetterQueue: { Type: 'AWS::SQS::Queue', Properties: { MessageRetentionPeriod: 1209600 } },
      AlarmTopic: { Type: 'AWS::SNS::Topic' },
      DeadLetterAlarm: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          AlarmActions: [{ Ref: 'AlarmTopic' }],
          OKActions: [{ Ref: 'AlarmTopic' }],
          AlarmDescription: 'its dead-letter queue holds messages',
          AlarmName: 'DeliverySemantics-at-least-once-dead-letters',
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          DatapointsToAlarm: 1,
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['DeadLetterQueue', 'QueueName'] } }],
          EvaluationPeriods: 1,
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Namespace: 'AWS/SQS',
          Period: 60,
          Statistic: 'Maximum',
          Threshold: 1,
          TreatMissingData: 'notBreaching',
          ...overrides,
        },
      },
    },
  };
}

const resolved = (template: Template): ResolvedStack =>
  resolveStack({ stackName: 'DeliverySemantics', template }, scope);

describe('alarmsOf', () => {
  it("reads a DLQ alarm: the queue's resolved name, M of N, period, threshold, missing data", () => {
    const stack = resolved(alarmTemplate());
    const queueName = stack.resources.get('DeadLetterQueue')?.name;
    expect(queueName).toMatch(/^DeliverySemantics-DeadLetterQueue-[A-Z0-9]{12}$/);
    expect(alarmsOf(stack)).toEqual([
      {
        name: 'DeliverySemantics-at-least-once-dead-letters',
        logicalId: 'DeadLetterAlarm',
        queueName,
        metric: 'ApproximateNumberOfMessagesVisible',
        attribute: 'ApproximateNumberOfMessages',
        statistic: 'Maximum',
        threshold: 1,
        comparison: 'GreaterThanOrEqualToThreshold',
        evaluationPeriods: 1,
        periodSeconds: 60,
        datapointsToAlarm: 1,
        treatMissingData: 'notBreaching',
      },
    ]);
  });

  it('reads the in-flight count from its own attribute; TreatMissingData defaults to missing', () => {
    const [alarm] = alarmsOf(
      resolved(
        alarmTemplate({
          MetricName: 'ApproximateNumberOfMessagesNotVisible',
          TreatMissingData: undefined,
          DatapointsToAlarm: undefined,
        }),
      ),
    );
    expect(alarm).toMatchObject({
      attribute: 'ApproximateNumberOfMessagesNotVisible',
      treatMissingData: 'missing',
    });
    expect(alarm).not.toHaveProperty('datapointsToAlarm');
  });

  it.each([
    ['another namespace', { Namespace: 'AWS/Lambda', MetricName: 'Errors' }, /namespace AWS\/Lambda/],
    ['a metric no queue attribute says', { MetricName: 'ApproximateAgeOfOldestMessage' }, /oldest/],
    ['a queue outside the stack', { Dimensions: [{ Name: 'QueueName', Value: 'elsewhere' }] }, /no queue/],
    ['another dimension', { Dimensions: [{ Name: 'FunctionName', Value: 'f' }] }, /QueueName dimension/],
    ['SampleCount', { Statistic: 'SampleCount' }, /statistic SampleCount/],
    ['anomaly detection', { ComparisonOperator: 'GreaterThanUpperThreshold' }, /anomaly/],
    ['M above N', { DatapointsToAlarm: 3, EvaluationPeriods: 2 }, /DatapointsToAlarm 3/],
  ])('refuses %s, in one line naming the alarm', (_, overrides, why) => {
    const refuse = () => alarmsOf(resolved(alarmTemplate(overrides)));
    expect(refuse).toThrow(UnsupportedTemplateError);
    expect(refuse).toThrow(why);
    expect(refuse).toThrow(
      /^Resources\.DeadLetterAlarm \(AWS::CloudWatch::Alarm\) DeliverySemantics-at-least-once-dead-letters: /,
    );
    try {
      refuse();
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('lists what it does not evaluate (the relay’s IteratorAge alarm, -c modes=all) beside what it does', () => {
    const template = alarmTemplate();
    const withRelayAlarm: Template = {
      Resources: {
        ...template.Resources,
        OutboxIteratorAgeAlarm: {
          Type: 'AWS::CloudWatch::Alarm',
          Properties: {
            AlarmName: 'DeliverySemantics-outbox-relay-behind',
            ComparisonOperator: 'GreaterThanOrEqualToThreshold',
            DatapointsToAlarm: 3,
            Dimensions: [{ Name: 'FunctionName', Value: 'DeliverySemantics-OutboxRelay' }],
            EvaluationPeriods: 3,
            MetricName: 'IteratorAge',
            Namespace: 'AWS/Lambda',
            Period: 60,
            Statistic: 'Maximum',
            Threshold: 300000,
            TreatMissingData: 'notBreaching',
          },
        },
      },
    };
    const { alarms, notEvaluated } = localAlarmsOf(resolved(withRelayAlarm));
    expect(alarms.map((each) => each.name)).toEqual(['DeliverySemantics-at-least-once-dead-letters']);
    expect(notEvaluated).toEqual([
      {
        name: 'DeliverySemantics-outbox-relay-behind',
        logicalId: 'OutboxIteratorAgeAlarm',
        why: 'Resources.OutboxIteratorAgeAlarm (AWS::CloudWatch::Alarm) DeliverySemantics-outbox-relay-behind: namespace AWS/Lambda, not AWS/SQS: not evaluated by the local runtime',
      },
    ]);
    expect(() => alarmsOf(resolved(withRelayAlarm))).toThrow(notEvaluated[0]?.why as string);
  });

  it('still refuses what CloudWatch itself would refuse, evaluated or not', () => {
    expect(() => localAlarmsOf(resolved(alarmTemplate({ DatapointsToAlarm: 2 })))).toThrow(
      /DatapointsToAlarm 2 exceeds EvaluationPeriods 1/,
    );
  });
});

/** An alarm on depth ≥ 1 (X: breaching, 0: not) with M of N and a missing-data treatment. */
function alarm(m: number, n: number, treatMissingData: AlarmDefinition['treatMissingData']): AlarmDefinition {
  return {
    name: 'a',
    logicalId: 'A',
    queueName: 'q',
    metric: 'ApproximateNumberOfMessagesVisible',
    attribute: 'ApproximateNumberOfMessages',
    statistic: 'Maximum',
    threshold: 1,
    comparison: 'GreaterThanOrEqualToThreshold',
    evaluationPeriods: n,
    periodSeconds: 60,
    datapointsToAlarm: m,
    treatMissingData,
  };
}
const points = (row: string) =>
  row.split(' ').map((point) => (point === '-' ? undefined : point === 'X' ? 1 : 0));

describe('evaluate: the tables of "How alarm state is evaluated when data is missing"', () => {
  // Columns: MISSING, IGNORE (KEEP: retain current state), BREACHING, NOT BREACHING.
  const table = [
    // Datapoints to Alarm 3, Evaluation Periods 3; CloudWatch retrieves the 5 most recent datapoints.
    [3, 3, '0 - X - X', 'OK', 'OK', 'OK', 'OK'],
    [3, 3, '0 - - - -', 'OK', 'OK', 'OK', 'OK'],
    [3, 3, '- - - - -', 'INSUFFICIENT_DATA', 'KEEP', 'ALARM', 'OK'],
    [3, 3, '0 X X - X', 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
    [3, 3, '- - - - X', 'INSUFFICIENT_DATA', 'KEEP', 'ALARM', 'OK'],
    // `X - - - -` is ALARM under MISSING in the guide (the oldest evaluated datapoint breaching):
    // not reproduced, see evaluate(). The other columns are.
    [3, 3, 'X - - - -', 'INSUFFICIENT_DATA', 'KEEP', 'ALARM', 'OK'],
    // 2 out of 3.
    [2, 3, '0 - X - X', 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
    [2, 3, '0 0 X 0 X', 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
    [2, 3, '0 - X - -', 'OK', 'OK', 'ALARM', 'OK'],
    [2, 3, '- - - - 0', 'OK', 'OK', 'ALARM', 'OK'],
    [2, 3, '- - - - X', 'INSUFFICIENT_DATA', 'KEEP', 'ALARM', 'OK'],
  ] as const;

  it.each(table)('%i of %i, %s: %s | %s | %s | %s', (m, n, row, missing, ignore, breaching, notBreaching) => {
    const datapoints = points(row);
    expect(evaluate(alarm(m, n, 'missing'), datapoints, 'OK')).toBe(missing);
    for (const current of ['OK', 'ALARM'] as const) {
      expect(evaluate(alarm(m, n, 'ignore'), datapoints, current)).toBe(ignore === 'KEEP' ? current : ignore);
    }
    expect(evaluate(alarm(m, n, 'breaching'), datapoints, 'OK')).toBe(breaching);
    expect(evaluate(alarm(m, n, 'notBreaching'), datapoints, 'OK')).toBe(notBreaching);
  });

  it('counts breaching datapoints that are not consecutive (M out of N)', () => {
    expect(evaluate(alarm(2, 3, 'missing'), [1, 0, 1], 'OK')).toBe('ALARM');
    expect(evaluate(alarm(3, 3, 'missing'), [1, 0, 1], 'OK')).toBe('OK');
  });

  it.each([
    ['GreaterThanThreshold', 1, 'OK'],
    ['GreaterThanThreshold', 2, 'ALARM'],
    ['LessThanThreshold', 0, 'ALARM'],
    ['LessThanOrEqualToThreshold', 1, 'ALARM'],
    ['LessThanOrEqualToThreshold', 2, 'OK'],
  ] as const)('%s threshold 1, value %i: %s', (comparison, value, state) => {
    expect(evaluate({ ...alarm(1, 1, 'missing'), comparison }, [value], 'OK')).toBe(state);
  });
});

describe('watchAlarms', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** The DLQ alarm: ≥ 1 visible message, 1 of 1, 60 s, missing data not breaching. */
  const dlqAlarm = { ...alarm(1, 1, 'notBreaching'), name: 'dlq-alarm', queueName: 'the-dlq' };

  function watched(alarms: AlarmDefinition[], options: { pollMs?: number } = {}) {
    const depth: Record<string, number | Error> = {};
    const reads: [string, QueueAttribute][] = [];
    const changes: [string, AlarmState, number, AlarmState][] = [];
    const watch = watchAlarms(
      alarms,
      async (queueName, attribute) => {
        reads.push([queueName, attribute]);
        const value = depth[queueName] ?? 0;
        if (value instanceof Error) throw value;
        return value;
      },
      (changed, state, value, previous) => changes.push([changed.name, state, value, previous]),
      options,
    );
    return { depth, reads, changes, watch };
  }

  it('reads once per local period, at most 5 s for a 60 s period, and reports each change of state', async () => {
    const { depth, reads, changes, watch } = watched([dlqAlarm]);
    expect(watch.states()).toEqual({ 'dlq-alarm': 'INSUFFICIENT_DATA' });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(reads).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(reads).toEqual([['the-dlq', 'ApproximateNumberOfMessages']]);
    // Its first evaluation: a new alarm leaves INSUFFICIENT_DATA, as on AWS.
    expect(changes).toEqual([['dlq-alarm', 'OK', 0, 'INSUFFICIENT_DATA']]);

    depth['the-dlq'] = 3;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(changes.at(-1)).toEqual(['dlq-alarm', 'ALARM', 3, 'OK']);
    expect(watch.states()).toEqual({ 'dlq-alarm': 'ALARM' });
    // Still in ALARM: no change, no call.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(changes).toHaveLength(2);

    depth['the-dlq'] = 0; // redriven
    await vi.advanceTimersByTimeAsync(5_000);
    expect(changes.at(-1)).toEqual(['dlq-alarm', 'OK', 0, 'ALARM']);
    expect(reads).toHaveLength(4);
    await watch.stop();
  });

  it('takes an alarm’s shorter period as it is, and pollMs over any period', async () => {
    const short = { ...dlqAlarm, name: 'short', queueName: 'short-q', periodSeconds: 2 };
    const first = watched([dlqAlarm, short]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(first.reads.filter(([queue]) => queue === 'short-q')).toHaveLength(5);
    expect(first.reads.filter(([queue]) => queue === 'the-dlq')).toHaveLength(2);
    await first.watch.stop();

    const second = watched([dlqAlarm], { pollMs: 100 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(second.reads).toHaveLength(10);
    await second.watch.stop();
  });

  it('takes a failed read as a missing datapoint, treated as TreatMissingData says', async () => {
    const breaching = { ...alarm(1, 1, 'breaching'), name: 'breaching', queueName: 'gone' };
    const notBreaching = { ...alarm(1, 1, 'notBreaching'), name: 'not-breaching', queueName: 'gone' };
    const ignore = { ...alarm(1, 1, 'ignore'), name: 'ignore', queueName: 'gone' };
    const { depth, changes, watch } = watched([breaching, notBreaching, ignore]);
    depth.gone = new Error('AWS.SimpleQueueService.NonExistentQueue');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(watch.states()).toEqual({
      breaching: 'ALARM',
      'not-breaching': 'OK',
      ignore: 'INSUFFICIENT_DATA',
    });
    expect(changes.find(([name]) => name === 'breaching')?.[2]).toBeNaN();
    await watch.stop();
  });

  it('stops reading once stopped, and waits for a read under way', async () => {
    let release: (value: number) => void = () => undefined;
    const reads: string[] = [];
    const watch = watchAlarms(
      [dlqAlarm],
      (queueName) => {
        reads.push(queueName);
        return new Promise<number>((resolve) => {
          release = resolve;
        });
      },
      () => undefined,
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(reads).toHaveLength(1);
    let stopped = false;
    const stopping = watch.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    release(5);
    await stopping;
    // A read that ends after stop() changes nothing.
    expect(watch.states()).toEqual({ 'dlq-alarm': 'INSUFFICIENT_DATA' });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(reads).toHaveLength(1);
  });

  it('stops on an onChange that throws, and stop() says why', async () => {
    const reads: string[] = [];
    const watch = watchAlarms(
      [dlqAlarm],
      async (queueName) => {
        reads.push(queueName);
        return 0;
      },
      () => {
        throw new Error('log sink closed');
      },
    );
    await vi.advanceTimersByTimeAsync(20_000);
    expect(reads).toHaveLength(1);
    await expect(watch.stop()).rejects.toThrow('log sink closed');
  });
});

import { UnsupportedTemplateError } from './intrinsics.js';
import type { ResolvedResource, ResolvedStack } from './resolve-stack.js';

/**
 * The stack's CloudWatch alarms, evaluated locally on the queues' depth: what would fire, and when,
 * had the assembly been deployed. Only what a queue's attributes can answer is evaluated (AWS/SQS
 * visible and in-flight counts on one QueueName); any other alarm is refused (alarmsOf) or listed
 * as not evaluated (localAlarmsOf), in one line naming it.
 * Nothing is sent anywhere: the alarm's actions (the SNS topic) are the caller's to log.
 *
 * Evaluation follows CloudWatch's user guide, "Evaluating an alarm" and "How alarm state is
 * evaluated when data is missing"
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#alarm-evaluation,
 * now https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-evaluation.html):
 * - Period: one datapoint per period. SQS sends its queue metrics once a minute, so a queue's
 *   datapoint here is one reading of its depth per (local) period.
 * - Evaluation Periods (N): the most recent N datapoints decide; Datapoints to Alarm (M, default N):
 *   ALARM when at least M of them breach ("M out of N"; they need not be consecutive), OK otherwise.
 * - Missing data: CloudWatch retrieves more datapoints than N, the "evaluation range". With at least
 *   N real datapoints in it, the most recent N real ones decide and TreatMissingData plays no part.
 *   With fewer, the missing ones are filled in per TreatMissingData (as few as possible):
 *   `notBreaching` and `breaching` as their names say; `missing` goes to INSUFFICIENT_DATA when
 *   nothing in the range says which way; `ignore` keeps the current state then.
 */

/** The state of a metric alarm, as CloudWatch names it. */
export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

export type TreatMissingData = 'missing' | 'notBreaching' | 'breaching' | 'ignore';

/**
 * The SQS queue attribute (GetQueueAttributes) a metric is read from: CloudWatch's
 * ApproximateNumberOfMessagesVisible is the queue's ApproximateNumberOfMessages, and
 * ApproximateNumberOfMessagesNotVisible is ApproximateNumberOfMessagesNotVisible
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html).
 */
export type QueueAttribute = 'ApproximateNumberOfMessages' | 'ApproximateNumberOfMessagesNotVisible';

export interface AlarmDefinition {
  /** AlarmName: the alarm's physical name. */
  readonly name: string;
  readonly logicalId: string;
  readonly queueName: string;
  /** MetricName, in the AWS/SQS namespace. */
  readonly metric: string;
  /** The queue attribute the metric is read from. */
  readonly attribute: QueueAttribute;
  readonly statistic: string;
  readonly threshold: number;
  /** ComparisonOperator, e.g. GreaterThanOrEqualToThreshold. */
  readonly comparison: string;
  readonly evaluationPeriods: number;
  readonly periodSeconds: number;
  /** M of "M out of N". @default evaluationPeriods */
  readonly datapointsToAlarm?: number;
  /** @default 'missing', as CloudWatch's */
  readonly treatMissingData: TreatMissingData;
}

const ATTRIBUTE_OF_METRIC: Readonly<Record<string, QueueAttribute>> = {
  ApproximateNumberOfMessagesVisible: 'ApproximateNumberOfMessages',
  ApproximateNumberOfMessagesNotVisible: 'ApproximateNumberOfMessagesNotVisible',
};
/** Why the other queue metrics are not evaluated: no queue attribute says them. */
const NOT_READABLE =
  'only ApproximateNumberOfMessagesVisible and ApproximateNumberOfMessagesNotVisible can be read from a local queue (GetQueueAttributes); the age of the oldest message and the counters of sends, receives and deletes are no queue attribute';
/**
 * With one reading per period, every statistic of a period's datapoint is that reading, but for
 * SampleCount (always 1 here) and Sum over a period longer than SQS's one-minute reports.
 */
const STATISTICS = ['Maximum', 'Minimum', 'Average'];
const COMPARISONS: Readonly<Record<string, (value: number, threshold: number) => boolean>> = {
  GreaterThanOrEqualToThreshold: (value, threshold) => value >= threshold,
  GreaterThanThreshold: (value, threshold) => value > threshold,
  LessThanThreshold: (value, threshold) => value < threshold,
  LessThanOrEqualToThreshold: (value, threshold) => value <= threshold,
};
const TREATMENTS: readonly TreatMissingData[] = ['missing', 'notBreaching', 'breaching', 'ignore'];

interface AlarmProperties {
  readonly AlarmName?: unknown;
  readonly Namespace?: unknown;
  readonly MetricName?: unknown;
  readonly Dimensions?: readonly { readonly Name?: unknown; readonly Value?: unknown }[];
  readonly Statistic?: unknown;
  readonly Period?: unknown;
  readonly EvaluationPeriods?: unknown;
  readonly DatapointsToAlarm?: unknown;
  readonly Threshold?: unknown;
  readonly ComparisonOperator?: unknown;
  readonly TreatMissingData?: unknown;
}

/** An alarm of the stack the local runtime does not evaluate, and why. */
export interface NotEvaluated {
  readonly name: string;
  readonly logicalId: string;
  /** One line: `Resources.<id> (AWS::CloudWatch::Alarm) <name>: <why>: not evaluated by the local runtime`. */
  readonly why: string;
}

/**
 * The alarms of a resolved stack, each on a queue of the stack. Throws UnsupportedTemplateError,
 * one line naming the alarm, for one it cannot evaluate locally (or that CloudWatch would refuse).
 */
export function alarmsOf(stack: ResolvedStack): AlarmDefinition[] {
  const { alarms, notEvaluated } = localAlarmsOf(stack);
  if (notEvaluated[0] !== undefined) throw new UnsupportedTemplateError(notEvaluated[0].why);
  return alarms;
}

/**
 * The alarms of a resolved stack, split: those evaluated locally, and those that are not, each with
 * its one line (`-c modes=all` adds the outbox relay's AWS/Lambda IteratorAge alarm, which no queue
 * answers). Still throws for an alarm CloudWatch itself would refuse (DatapointsToAlarm above
 * EvaluationPeriods, a Period or Threshold that is no number).
 */
export function localAlarmsOf(stack: ResolvedStack): {
  alarms: AlarmDefinition[];
  notEvaluated: NotEvaluated[];
} {
  const queueNames = new Set(
    stack.byType('AWS::SQS::Queue').map((queue) => queue.attributes.QueueName as string),
  );
  const alarms: AlarmDefinition[] = [];
  const notEvaluated: NotEvaluated[] = [];
  for (const resource of stack.byType('AWS::CloudWatch::Alarm')) {
    const read = readAlarm(resource, queueNames);
    if ('notEvaluated' in read) {
      notEvaluated.push({ name: resource.physicalId, logicalId: resource.logicalId, why: read.notEvaluated });
    } else {
      alarms.push(read);
    }
  }
  return { alarms, notEvaluated };
}

function readAlarm(
  resource: ResolvedResource,
  queueNames: ReadonlySet<string>,
): AlarmDefinition | { readonly notEvaluated: string } {
  const p = resource.properties as AlarmProperties;
  const name = resource.physicalId;
  const line = (why: string) =>
    `Resources.${resource.logicalId} (AWS::CloudWatch::Alarm) ${name}: ${why}: not evaluated by the local runtime`;
  const skip = (why: string) => ({ notEvaluated: line(why) });
  const invalid = (why: string) => new UnsupportedTemplateError(line(why));

  if (p.Namespace !== 'AWS/SQS') return skip(`namespace ${String(p.Namespace)}, not AWS/SQS`);
  const metric = String(p.MetricName);
  const attribute = ATTRIBUTE_OF_METRIC[metric];
  if (attribute === undefined) return skip(`metric AWS/SQS ${metric}: ${NOT_READABLE}`);
  const dimensions = p.Dimensions ?? [];
  const queueName = dimensions[0]?.Value;
  if (dimensions.length !== 1 || dimensions[0]?.Name !== 'QueueName' || typeof queueName !== 'string') {
    return skip(
      `dimensions ${JSON.stringify(dimensions)}: one QueueName dimension is the only one a queue's depth answers`,
    );
  }
  if (!queueNames.has(queueName)) return skip(`QueueName ${queueName} is no queue of the stack`);
  const statistic = String(p.Statistic);
  if (!STATISTICS.includes(statistic)) {
    return skip(
      `statistic ${statistic}: one reading of the depth per period gives ${STATISTICS.join(', ')} only`,
    );
  }
  const comparison = String(p.ComparisonOperator);
  if (COMPARISONS[comparison] === undefined) return skip(`comparison ${comparison} (anomaly detection)`);

  const treatMissingData = (p.TreatMissingData ?? 'missing') as TreatMissingData;
  if (!TREATMENTS.includes(treatMissingData)) throw invalid(`TreatMissingData ${String(treatMissingData)}`);
  const whole = (value: unknown, what: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1) throw invalid(`${what} ${String(value)}`);
    return number;
  };
  const threshold = Number(p.Threshold);
  if (!Number.isFinite(threshold)) throw invalid(`Threshold ${String(p.Threshold)}`);
  const evaluationPeriods = whole(p.EvaluationPeriods, 'EvaluationPeriods');
  const datapointsToAlarm =
    p.DatapointsToAlarm === undefined ? undefined : whole(p.DatapointsToAlarm, 'DatapointsToAlarm');
  if (datapointsToAlarm !== undefined && datapointsToAlarm > evaluationPeriods) {
    throw invalid(`DatapointsToAlarm ${datapointsToAlarm} exceeds EvaluationPeriods ${evaluationPeriods}`);
  }
  return {
    name,
    logicalId: resource.logicalId,
    queueName,
    metric,
    attribute,
    statistic,
    threshold,
    comparison,
    evaluationPeriods,
    periodSeconds: whole(p.Period, 'Period'),
    ...(datapointsToAlarm === undefined ? {} : { datapointsToAlarm }),
    treatMissingData,
  };
}

/**
 * How many datapoints CloudWatch retrieves around the N it evaluates (the "evaluation range"). The
 * guide gives no formula ("depends on the length of the alarm period"); its worked examples
 * retrieve 5 for N = 3, so N + 2.
 */
export function evaluationRangeOf(alarm: AlarmDefinition): number {
  return alarm.evaluationPeriods + 2;
}

/**
 * The state CloudWatch would set from the most recent datapoints, oldest first (`undefined`: a
 * missing datapoint), as the guide's "How alarm state is evaluated when data is missing" describes.
 *
 * One case of the guide's tables is not reproduced: with TreatMissingData `missing`, datapoints
 * `X - - - -` (the oldest retrieved breaching, the rest missing, 3 out of 3) go to ALARM there,
 * "because the oldest evaluated data point is breaching"; here, as for `- - - - X`, too few real
 * datapoints say which way, and the state is INSUFFICIENT_DATA.
 */
export function evaluate(
  alarm: AlarmDefinition,
  datapoints: readonly (number | undefined)[],
  current: AlarmState,
): AlarmState {
  const n = alarm.evaluationPeriods;
  const m = alarm.datapointsToAlarm ?? n;
  const breaches = COMPARISONS[alarm.comparison] as (value: number, threshold: number) => boolean;
  const range = datapoints.slice(-evaluationRangeOf(alarm));
  const real = range
    .filter((value): value is number => value !== undefined)
    .map((value) => breaches(value, alarm.threshold));
  const verdict = (breaching: readonly boolean[]): AlarmState =>
    breaching.filter(Boolean).length >= m ? 'ALARM' : 'OK';
  // Enough real datapoints: the most recent N of them decide, whatever TreatMissingData says.
  if (real.length >= n) return verdict(real.slice(-n));
  const filled = n - real.length;
  switch (alarm.treatMissingData) {
    case 'breaching':
      return verdict([...real, ...Array<boolean>(filled).fill(true)]);
    case 'notBreaching':
      return verdict([...real, ...Array<boolean>(filled).fill(false)]);
    case 'missing':
    case 'ignore': {
      const breaching = real.filter(Boolean).length;
      if (breaching >= m) return 'ALARM';
      // A real datapoint within the threshold: OK. Nothing but breaching ones, too few: undecided.
      if (breaching < real.length) return 'OK';
      return alarm.treatMissingData === 'ignore' ? current : 'INSUFFICIENT_DATA';
    }
  }
}

/**
 * Called on each change of an alarm's state, as CloudWatch changes it (and would run the alarm's
 * OKActions or AlarmActions). `value` is the datapoint that changed it (NaN when it was missing).
 * A new alarm starts in INSUFFICIENT_DATA, as on AWS: its first evaluation is a change too
 * (`previous` says so), which a caller logging only what fires can pass over.
 */
export type AlarmChange = (
  alarm: AlarmDefinition,
  state: AlarmState,
  value: number,
  previous: AlarmState,
) => void;

export interface WatchOptions {
  /** How often each alarm's queue is read, standing for one period. @default min(Period, 5 s) */
  readonly pollMs?: number;
  /** A failed read is a missing datapoint; this hears why. */
  readonly onReadError?: (alarm: AlarmDefinition, error: unknown) => void;
}

export interface AlarmWatch {
  /**
   * Stops polling and waits for the reads under way. An onChange that throws stops the watch; stop()
   * rejects with its error.
   */
  stop(): Promise<void>;
  states(): Record<string, AlarmState>;
}

/** The longest local period: a local run lasts minutes. */
export const MAX_LOCAL_PERIOD_MS = 5_000;

/**
 * Watches `alarms`: reads each one's queue once per local period with `readDepth(queueName,
 * attribute)` (a rejected read is a missing datapoint), keeps the evaluation range's datapoints,
 * evaluates after each read, and calls `onChange` on each change of state.
 */
export function watchAlarms(
  alarms: readonly AlarmDefinition[],
  readDepth: (queueName: string, attribute: QueueAttribute) => Promise<number>,
  onChange: AlarmChange,
  options: WatchOptions = {},
): AlarmWatch {
  const states: Record<string, AlarmState> = {};
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const reads = new Set<Promise<void>>();
  let stopped = false;
  let failure: { error: unknown } | undefined;

  for (const alarm of alarms) {
    states[alarm.name] = 'INSUFFICIENT_DATA';
    const datapoints: (number | undefined)[] = [];
    // A period is a minute or more on AWS (DLQ alarms: 60 s). The local run is minutes long: at
    // 60 s a period, an alarm of one or a few periods would not complete before the run ends, so a
    // local period is the alarm's own, but at most MAX_LOCAL_PERIOD_MS.
    const pollMs = options.pollMs ?? Math.min(alarm.periodSeconds * 1000, MAX_LOCAL_PERIOD_MS);
    const poll = async () => {
      let value: number | undefined;
      try {
        value = await readDepth(alarm.queueName, alarm.attribute);
      } catch (error) {
        options.onReadError?.(alarm, error);
      }
      if (stopped) return;
      datapoints.push(value);
      if (datapoints.length > evaluationRangeOf(alarm)) datapoints.shift();
      const previous = states[alarm.name] as AlarmState;
      const state = evaluate(alarm, datapoints, previous);
      if (state === previous) return;
      states[alarm.name] = state;
      onChange(alarm, state, value ?? Number.NaN, previous);
    };
    // Each read waits for the previous one: a slow queue never has two reads under way.
    const schedule = () => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        const read = poll().then(
          () => undefined,
          (error: unknown) => {
            failure ??= { error };
          },
        );
        reads.add(read);
        void read.then(() => {
          reads.delete(read);
          if (!stopped && failure === undefined) schedule();
        });
      }, pollMs);
      timers.add(timer);
    };
    schedule();
  }

  return {
    stop: async () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all(reads);
      if (failure !== undefined) throw failure.error;
    },
    states: () => ({ ...states }),
  };
}

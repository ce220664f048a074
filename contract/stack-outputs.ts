import type { PollerRange } from './deployment-settings.js';
import type { Mode } from './topology.js';

/** The stack's name unless `-c stackName=…` says otherwise; the experiment's `--stack` default. */
export const DEFAULT_STACK_NAME = 'DeliverySemantics';

/**
 * The stack's CloudFormation output keys, shared by the stack (which writes them) and the
 * experiment driver (which reads them with DescribeStacks), so the two cannot drift apart.
 */
export const STACK_OUTPUTS = {
  tableName: 'TableName',
  verifierFunctionName: 'VerifierFunctionName',
  crashRate: 'CrashRate',
  crashSeed: 'CrashSeed',
  topologyVersion: 'TopologyVersion',
  /** The modes the stack deploys (`-c modes`), comma-separated in topology order. */
  deployedModes: 'DeployedModes',
  /** The SNS topic every mode's DLQ alarm notifies: subscribe the team that runs the redrive to it. */
  alarmTopicArn: 'AlarmTopicArn',
  /** The stand-in payment provider's Function URL (AWS_IAM auth), which the charge modes call. */
  paymentProviderUrl: 'PaymentProviderUrl',
  /** The producing service's outbox table (stream NEW_IMAGE) and its own state table (docs/side-effects.md). */
  outboxTableName: 'OutboxTableName',
  producerStateTableName: 'ProducerStateTableName',
} as const;

/** `at-most-once` → `AtMostOnce`: the construct id prefix of a mode's resources and outputs. */
export function modeId(mode: Mode): string {
  return mode
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

export function modeOutputs(mode: Mode) {
  const id = modeId(mode);
  return {
    queueUrl: `${id}QueueUrl`,
    deadLetterQueueUrl: `${id}DeadLetterQueueUrl`,
    functionName: `${id}FunctionName`,
    batchSize: `${id}BatchSize`,
    maxBatchingWindow: `${id}MaxBatchingWindow`,
    /** Only when it is in force: provisioned pollers replace it. */
    maxConcurrency: `${id}MaxConcurrency`,
    /** What scales the mapping: `maxConcurrency=5`, or `provisionedPollers=2:10`. */
    scaling: `${id}Scaling`,
    visibilityTimeout: `${id}VisibilityTimeout`,
    maxReceiveCount: `${id}MaxReceiveCount`,
  } as const;
}

/** A `<Mode>Scaling` output, as the stack writes it: `maxConcurrency=5` or `provisionedPollers=2:10`. */
export function scalingOutput(maxConcurrency: number, pollers: PollerRange | undefined): string {
  return pollers
    ? `provisionedPollers=${pollers.minimumPollers}:${pollers.maximumPollers}`
    : `maxConcurrency=${maxConcurrency}`;
}

/** The pollers a `<Mode>Scaling` output names, or none when maximum concurrency is in force. */
export function pollersOfScaling(scaling: string | undefined): PollerRange | undefined {
  const match = /^provisionedPollers=(\d+):(\d+)$/.exec(scaling ?? '');
  return match ? { minimumPollers: Number(match[1]), maximumPollers: Number(match[2]) } : undefined;
}

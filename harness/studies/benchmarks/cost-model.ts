import { isFifoMode, MODES, type Mode } from '../../../contract/topology.js';
import type { OperationCounts } from '../../local-aws/dynamodb-proxy/meter.js';
import { PRICES } from './prices.js';

/** What one metered run of a mode counted (harness/studies/benchmarks/metered-run.ts). */
export interface ModeUsage {
  readonly messages: number;
  readonly lambda: { readonly invocations: number; readonly billedDurationMs: number };
  readonly sqs: {
    /** Billed send requests (SendMessageBatch of 10, 64 KB chunks counted). */
    readonly sendRequests: number;
    /** Receives that returned at least one message (empty polls are reported apart). */
    readonly receiveRequests: number;
    readonly emptyReceives: number;
    readonly deleteRequests: number;
  };
  readonly dynamodb: DynamoDbUsage;
}

export interface DynamoDbUsage {
  readonly requests: number;
  readonly writeUnits: number;
  readonly readUnits: number;
}

const isRead = (operation: string) => operation === 'GetItem' || operation === 'Query';

/**
 * What the meter counted, per operation, as billed usage: every request; write units by the
 * documented rules (DynamoDB Local under-reports transactions, see dynamodb-proxy/meter.ts); read
 * units as DynamoDB Local reported them. `reportedWriteUnits` is DynamoDB Local's own count of the
 * writes, kept beside the rules, not billed.
 */
export function dynamodbUsageOf(
  operations: Readonly<Record<string, OperationCounts>>,
): DynamoDbUsage & { readonly reportedWriteUnits: number } {
  const sum = (pick: (counts: OperationCounts) => number, only: (operation: string) => boolean) =>
    Object.entries(operations)
      .filter(([operation]) => only(operation))
      .reduce((total, [, counts]) => total + pick(counts), 0);
  return {
    requests: sum(
      (counts) => counts.requests,
      () => true,
    ),
    writeUnits: sum(
      (counts) => counts.ruleWriteUnits,
      (op) => !isRead(op),
    ),
    readUnits: sum((counts) => counts.consumedUnits, isRead),
    reportedWriteUnits: sum(
      (counts) => counts.consumedUnits,
      (op) => !isRead(op),
    ),
  };
}

/**
 * A production shape's usage (harness/studies/benchmarks/production-shape.ts): its own DynamoDB counts, and
 * the Lambda and SQS of its mode metered beside it — the same queue, mapping, batch size and loop,
 * scaled to its messages. The mode's durations include the verifier's writes, so the production
 * row's Lambda line is an upper bound, as every mode's is.
 */
export function productionUsage(
  messages: number,
  dynamodb: DynamoDbUsage,
  instrumented: ModeUsage,
): ModeUsage {
  const scale = messages / Math.max(instrumented.messages, 1);
  const scaled = (value: number) => Math.round(value * scale);
  return {
    messages,
    lambda: {
      invocations: scaled(instrumented.lambda.invocations),
      billedDurationMs: scaled(instrumented.lambda.billedDurationMs),
    },
    sqs: {
      sendRequests: scaled(instrumented.sqs.sendRequests),
      receiveRequests: scaled(instrumented.sqs.receiveRequests),
      emptyReceives: scaled(instrumented.sqs.emptyReceives),
      deleteRequests: scaled(instrumented.sqs.deleteRequests),
    },
    dynamodb,
  };
}

export interface ModeCost {
  /** Per message: what a million messages need, divided by a million. */
  readonly perMessage: {
    readonly lambdaRequests: number;
    readonly lambdaGbSeconds: number;
    readonly sqsRequests: number;
    readonly dynamodbRequests: number;
    readonly writeUnits: number;
    readonly readUnits: number;
  };
  /** US dollars per million messages, by service and in total. */
  readonly usdPerMillion: {
    readonly lambda: number;
    readonly sqs: number;
    readonly dynamodb: number;
    readonly total: number;
  };
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Dollars per million messages from counted usage and PRICES. Lambda's GB-seconds are the locally
 * measured billed durations × the stack's memory (contract/topology.ts): durations on a shared 2-core
 * machine, with DynamoDB Local behind them, are longer than on AWS, so read the Lambda line as an
 * upper bound. Empty receives are left out: on AWS the mapping's pollers long-poll whatever the
 * traffic, a fixed cost per poller, not per message.
 */
export function costPerMillion(mode: Mode, usage: ModeUsage): ModeCost {
  const n = Math.max(usage.messages, 1);
  const gbSeconds = (usage.lambda.billedDurationMs / 1000) * (MODES[mode].memoryMb / 1024);
  const sqsRequests = usage.sqs.sendRequests + usage.sqs.receiveRequests + usage.sqs.deleteRequests;
  const perMessage = {
    lambdaRequests: usage.lambda.invocations / n,
    lambdaGbSeconds: gbSeconds / n,
    sqsRequests: sqsRequests / n,
    dynamodbRequests: usage.dynamodb.requests / n,
    writeUnits: usage.dynamodb.writeUnits / n,
    readUnits: usage.dynamodb.readUnits / n,
  };
  const lambda =
    perMessage.lambdaRequests * PRICES.lambda.perMillionRequests +
    perMessage.lambdaGbSeconds * 1e6 * PRICES.lambda.perGbSecondArm64;
  const sqs =
    perMessage.sqsRequests *
    (isFifoMode(mode) ? PRICES.sqs.perMillionFifoRequests : PRICES.sqs.perMillionRequests);
  const dynamodb =
    perMessage.writeUnits * PRICES.dynamodb.perMillionWriteRequestUnits +
    perMessage.readUnits * PRICES.dynamodb.perMillionReadRequestUnits;
  return {
    perMessage: Object.fromEntries(
      Object.entries(perMessage).map(([key, value]) => [key, round(value, 4)]),
    ) as ModeCost['perMessage'],
    usdPerMillion: {
      lambda: round(lambda, 3),
      sqs: round(sqs, 3),
      dynamodb: round(dynamodb, 3),
      total: round(lambda + sqs + dynamodb, 3),
    },
  };
}

import { type SharedDynamoDb, startDynamoDbEmulator } from './dynamodb-emulator.js';
import type { RunningEmulator } from './running-emulator.js';
import { startSqsEmulator } from './sqs-emulator.js';

export { DynamoDbLocalStartError, JavaMissingError } from './dynamodb-emulator.js';

export type { RunningEmulator } from './running-emulator.js';

export interface RunningEmulators {
  readonly sqsEndpoint: string;
  readonly dynamodbEndpoint: string;
  /**
   * Pid of DynamoDB Local's Java process (benchmarks read its peak memory from /proc); absent for a
   * shared one, which someone else started.
   */
  readonly dynamodbPid?: number;
  /** Stops both, even if stopping one fails. */
  stop(): Promise<void>;
}

/**
 * Starts the SQS and DynamoDB emulators in parallel; if either fails, the other is stopped before
 * rethrowing. Given a `shared` DynamoDB Local, starts SQS only, and stop() leaves that one running.
 */
export async function startEmulators(shared?: SharedDynamoDb): Promise<RunningEmulators> {
  const started = await Promise.allSettled([
    startSqsEmulator(),
    shared ? { endpoint: shared.endpoint, stop: async () => undefined } : startDynamoDbEmulator(),
  ]);
  const [sqs, dynamodb] = started;
  if (sqs.status === 'rejected' || dynamodb.status === 'rejected') {
    await stopAll(started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])));
    const reasons = started.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
    // One failure is rethrown as is, so callers can still branch on e.g. JavaMissingError.
    throw reasons.length === 1 ? reasons[0] : new AggregateError(reasons, 'both emulators failed to start');
  }
  return {
    sqsEndpoint: sqs.value.endpoint,
    dynamodbEndpoint: dynamodb.value.endpoint,
    ...('pid' in dynamodb.value ? { dynamodbPid: dynamodb.value.pid } : {}),
    stop: () => stopAll([sqs.value, dynamodb.value]),
  };
}

async function stopAll(emulators: readonly RunningEmulator[]): Promise<void> {
  const results = await Promise.allSettled(emulators.map((emulator) => emulator.stop()));
  const reasons = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
  if (reasons.length > 0) throw new AggregateError(reasons, 'failed to stop emulator(s)');
}

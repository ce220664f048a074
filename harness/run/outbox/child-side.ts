/**
 * What a producer or relay process shares: its work arrives over IPC, its reports go back the same
 * way, and it never outlives its parent.
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient, ListStreamsCommand } from '@aws-sdk/client-dynamodb-streams';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ChildReport } from './protocol.js';

/** Resolves once the report is handed to the IPC channel: a kill after it cannot lose it. */
export function report(message: ChildReport): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) {
      reject(new Error('no IPC channel: this process must be started by harness/run/outbox (fork)'));
      return;
    }
    process.send(message, undefined, {}, (error) => (error ? reject(error) : resolve()));
  });
}

/** The parent's first message; later ones go to `onLater`. */
export function receiveWork<T>(onLater: (message: unknown) => void = () => undefined): Promise<T> {
  // The parent is gone (it crashed, or was killed): nobody will read the reports or restart us.
  process.once('disconnect', () => process.exit(1));
  return new Promise((resolve) => {
    let first = true;
    process.on('message', (message) => {
      if (first) {
        first = false;
        resolve(message as T);
      } else onLater(message);
    });
  });
}

/** The clients, pointed at the endpoints in this process's environment (AWS_ENDPOINT_URL_*). */
export function clients() {
  const dynamodb = new DynamoDBClient({});
  return {
    dynamodb,
    // Explicit, as the harness's own client: fauxqs's queue URLs name hosts (sqs.<region>.localhost)
    // that only resolve inside the local Lambda runtime.
    sqs: new SQSClient(
      process.env.AWS_ENDPOINT_URL_SQS ? { endpoint: process.env.AWS_ENDPOINT_URL_SQS } : {},
    ),
    ddb: DynamoDBDocumentClient.from(dynamodb),
    streams: new DynamoDBStreamsClient({}),
  };
}

/**
 * One cheap request per client while the process waits as a standby: the SDK's first request in a
 * process (its lazy loading, credentials, a new connection) then does not delay the work after a crash.
 */
export async function warmUp(client: ReturnType<typeof clients>): Promise<void> {
  await Promise.allSettled([
    client.dynamodb.send(new ListTablesCommand({ Limit: 1 })),
    client.sqs.send(new ListQueuesCommand({ MaxResults: 1 })),
    client.streams.send(new ListStreamsCommand({ Limit: 1 })),
  ]);
}

/** Ends the process after a failure the parent must see: reported, then exit code 1. */
export async function failWith(error: unknown): Promise<never> {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  process.stderr.write(`${text}\n`);
  await report({ type: 'failed', error: text }).catch(() => undefined);
  process.exit(1);
}

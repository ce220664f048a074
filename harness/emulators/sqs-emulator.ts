import { buildApp } from 'fauxqs';
import type { RunningEmulator } from './index.js';

/**
 * Starts fauxqs in this process on a free loopback port.
 *
 * SQS clients must set `endpoint` in code (or `useQueueUrlAsEndpoint: false`): fauxqs's queue URLs look like
 * `http://sqs.us-east-1.localhost:<port>/000000000000/<name>`, that host does not resolve, and without a
 * coded endpoint the SDK sends each request to its QueueUrl's host (AWS_ENDPOINT_URL_SQS is not enough).
 */
export async function startSqsEmulator(): Promise<RunningEmulator> {
  // buildApp + our own listen rather than startFauxqs, which always binds 0.0.0.0.
  const app = buildApp({ logger: false });
  const endpoint = await app.listen({ host: '127.0.0.1', port: 0 });
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    // close() also releases pending long polls (fauxqs's preClose hook), so it never waits up to 20 s.
    stop: () => {
      stopping ??= app.close();
      return stopping;
    },
  };
}

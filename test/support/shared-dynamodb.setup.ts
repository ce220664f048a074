import type { TestProject } from 'vitest/node';
import {
  assertJava,
  reserveLoopbackPort,
  startDynamoDbEmulator,
} from '../../harness/emulators/dynamodb-emulator.js';

/**
 * Starts the DynamoDB Local the component files share (shared-dynamodb.ts) without waiting for it:
 * its JVM starts while the first files run, and a file that needs it waits until it answers.
 */
export default async function startSharedDynamoDb(project: TestProject): Promise<() => Promise<void>> {
  // A missing Java fails the run here, with its own message, not as every file's timeout.
  assertJava();
  const port = await reserveLoopbackPort();
  const starting = startDynamoDbEmulator({ port });
  starting.catch((error: Error) =>
    console.error(`the component files' shared DynamoDB Local did not start: ${error.message}`),
  );
  project.provide('sharedDynamoDb', { endpoint: `http://127.0.0.1:${port}` });
  return async () => {
    const running = await starting.catch(() => undefined);
    if (running === undefined) return;
    // In memory, nothing to keep: no SIGTERM grace at the end of every run.
    process.kill(running.pid, 'SIGKILL');
    await running.stop();
  };
}

import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  assertJava,
  reserveLoopbackPort,
  startDynamoDbEmulator,
} from '../../harness/local-aws/emulators/dynamodb-emulator.js';

/**
 * Starts the DynamoDB Local the component files share (shared-dynamodb.ts) without waiting for it:
 * its JVM starts while the first files run, and a file that needs it waits for the outcome, which
 * this writes to a file once known (provided values are fixed when the setup returns): `ready`, or
 * the error that stopped it. Without Java only the files that share it fail, with its message.
 */
export default async function startSharedDynamoDb(project: TestProject): Promise<() => Promise<void>> {
  const folder = mkdtempSync(join(tmpdir(), 'shared-dynamodb-'));
  const outcomeFile = join(folder, 'outcome');
  const port = await reserveLoopbackPort();
  project.provide('sharedDynamoDb', { endpoint: `http://127.0.0.1:${port}`, outcomeFile });
  const starting = (async () => {
    assertJava();
    return startDynamoDbEmulator({ port });
  })();
  // Renamed into place, so a file never reads half of it.
  const settle = (outcome: string) => {
    writeFileSync(`${outcomeFile}.part`, outcome);
    renameSync(`${outcomeFile}.part`, outcomeFile);
  };
  starting.then(
    () => settle('ready'),
    (error: Error) => settle(error.message),
  );
  return async () => {
    const running = await starting.catch(() => undefined);
    rmSync(folder, { recursive: true, force: true });
    if (running === undefined) return;
    // In memory, nothing to keep: no SIGTERM grace at the end of every run.
    process.kill(running.pid, 'SIGKILL');
    await running.stop();
  };
}

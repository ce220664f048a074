import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { type SharedDynamoDb, waitUntilReady } from '../../harness/emulators/dynamodb-emulator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The component project's one DynamoDB Local (shared-dynamodb.setup.ts). */
    sharedDynamoDb: { readonly endpoint: string } | undefined;
  }
}

/**
 * The component project's DynamoDB Local, once it answers, with a table prefix of this file's own:
 * one JVM for the files that only need tables, instead of one each (a JVM start is 2–3
 * CPU-seconds, and the cheap phase is CPU-bound). A file that stops, kills or restarts DynamoDB
 * Local starts its own.
 */
export async function sharedDynamoDb(file: string): Promise<SharedDynamoDb> {
  const provided = inject('sharedDynamoDb');
  if (provided === undefined) {
    throw new Error(
      'no shared DynamoDB Local: this file runs in the component project, whose globalSetup ' +
        '(test/support/shared-dynamodb.setup.ts) starts one; run it with `npx vitest run --project component <file>`',
    );
  }
  const outcome = await waitUntilReady(provided.endpoint);
  if (outcome !== 'ready') {
    throw new Error(
      `the shared DynamoDB Local at ${provided.endpoint} did not answer in time: the run's output says why it did not start`,
    );
  }
  return { endpoint: provided.endpoint, tablePrefix: `${file}-${randomUUID().slice(0, 8)}-` };
}

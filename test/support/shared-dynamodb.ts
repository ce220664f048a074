import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { SharedDynamoDb } from '../../harness/emulators/dynamodb-emulator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The component project's one DynamoDB Local (shared-dynamodb.setup.ts). */
    sharedDynamoDb: { readonly endpoint: string; readonly pid: number } | undefined;
  }
}

/**
 * The component project's DynamoDB Local, with a table prefix of this file's own: one JVM for the
 * files that only need tables, instead of one each (a JVM start is 2–3 CPU-seconds, and the
 * cheap phase is CPU-bound). A file that stops, kills or restarts DynamoDB Local starts its own.
 */
export function sharedDynamoDb(file: string): SharedDynamoDb {
  const running = inject('sharedDynamoDb');
  if (running === undefined) {
    throw new Error(
      'no shared DynamoDB Local: this file runs in the component project, whose globalSetup ' +
        '(test/support/shared-dynamodb.setup.ts) starts one; run it with `npx vitest run --project component <file>`',
    );
  }
  return { ...running, tablePrefix: `${file}-${randomUUID().slice(0, 8)}-` };
}

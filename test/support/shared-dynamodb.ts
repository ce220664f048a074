import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import type { SharedDynamoDb } from '../../harness/local-aws/emulators/dynamodb-emulator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The component project's one DynamoDB Local (shared-dynamodb.setup.ts). */
    sharedDynamoDb: { readonly endpoint: string; readonly outcomeFile: string } | undefined;
  }
}

/**
 * The component project's DynamoDB Local, once it answers, with a table prefix of this file's own:
 * one JVM for the files that only need tables, instead of one each (a JVM start is 2–3
 * CPU-seconds, and the cheap phase is CPU-bound). A file that stops, kills or restarts DynamoDB
 * Local starts its own. Waits for the start's own outcome (its deadline is the emulator's), and
 * throws the error that stopped it.
 */
export async function sharedDynamoDb(file: string): Promise<SharedDynamoDb> {
  const provided = inject('sharedDynamoDb');
  if (provided === undefined) {
    throw new Error(
      'no shared DynamoDB Local: this file runs in the component project, whose globalSetup ' +
        '(test/support/shared-dynamodb.setup.ts) starts one; run it with `npx vitest run --project component <file>`',
    );
  }
  while (!existsSync(provided.outcomeFile)) await sleep(50);
  const outcome = readFileSync(provided.outcomeFile, 'utf8');
  if (outcome !== 'ready')
    throw new Error(`the component files' shared DynamoDB Local did not start: ${outcome}`);
  return { endpoint: provided.endpoint, tablePrefix: `${file}-${randomUUID().slice(0, 8)}-` };
}

import type { TestProject } from 'vitest/node';
import { startDynamoDbEmulator } from '../../harness/emulators/dynamodb-emulator.js';

/** Starts the DynamoDB Local the component files share (shared-dynamodb.ts), and stops it at the end. */
export default async function startSharedDynamoDb(project: TestProject): Promise<() => Promise<void>> {
  const dynamodb = await startDynamoDbEmulator();
  project.provide('sharedDynamoDb', { endpoint: dynamodb.endpoint, pid: dynamodb.pid });
  return () => dynamodb.stop();
}

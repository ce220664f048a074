import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createEffectivelyOnceHandler } from '@sqs-delivery-semantics/consumer-cores/effectively-once';
import {
  redelivered,
  resent,
  sqsEvent,
  sqsRecord,
  startDynamoDbLocal,
} from '@sqs-delivery-semantics/consumer-cores/testing';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, SOURCE_CONDITION } from '../../stack/bundling.js';

const run = promisify(execFile);

/** The cores package's testing entry, as a team's first test uses it: its own DynamoDB Local. */
describe('@sqs-delivery-semantics/consumer-cores/testing', () => {
  it('starts DynamoDB Local on a free port, where a handler applies a redelivery and a re-send once, and stops it', async () => {
    const local = await startDynamoDbLocal();
    try {
      const client = new DynamoDBClient(local.clientConfig);
      await client.send(
        new CreateTableCommand({
          TableName: 'ledger',
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      const ddb = DynamoDBDocumentClient.from(client);
      const handler = createEffectivelyOnceHandler({
        ddb,
        markerTable: 'ledger',
        logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
        writesFor: (event) => [
          {
            Update: {
              TableName: 'ledger',
              Key: { pk: 'ACCOUNT#a' },
              UpdateExpression: 'ADD balanceCents :amount',
              ExpressionAttributeValues: { ':amount': Number(event.amountCents) },
            },
          },
        ],
      });
      const first = sqsRecord({ eventId: 'e-1', createdAt: new Date().toISOString(), amountCents: 250 });
      expect(redelivered(first).attributes.ApproximateReceiveCount).toBe('2');
      expect(resent(first).messageId).not.toBe(first.messageId);
      for (const record of [first, redelivered(first), resent(first)]) {
        expect(await handler(sqsEvent(record))).toEqual({ batchItemFailures: [] });
      }
      const account = await ddb.send(new GetCommand({ TableName: 'ledger', Key: { pk: 'ACCOUNT#a' } }));
      expect(account.Item?.balanceCents).toBe(250);
    } finally {
      await local.stop();
    }
    // Stopped: nothing answers there any more.
    await expect(fetch(local.endpoint)).rejects.toThrow();
  }, 60_000);

  it('says that Java is missing when there is none on PATH', async () => {
    // A child whose PATH holds node and nothing else: no java to spawn.
    const bin = await mkdtemp(join(tmpdir(), 'no-java-'));
    try {
      await symlink(process.execPath, join(bin, 'node'));
      const script =
        "const { startDynamoDbLocal } = await import('@sqs-delivery-semantics/consumer-cores/testing');" +
        'await startDynamoDbLocal().then(() => console.log("started"), (error) => console.log(error.name, error.message));';
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', `--conditions=${SOURCE_CONDITION}`, '--input-type=module', '-e', script],
        { cwd: PROJECT_ROOT, env: { PATH: bin } },
      );
      expect(stdout).toMatch(
        /^DynamoDbLocalError DynamoDB Local did not start: no `java` on PATH: install Java 17\+/,
      );
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it('leaves no DynamoDB Local behind when the test process exits without stop()', async () => {
    const script =
      "const { startDynamoDbLocal } = await import('@sqs-delivery-semantics/consumer-cores/testing');" +
      'const local = await startDynamoDbLocal(); console.log(local.endpoint); process.exit(0);';
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', `--conditions=${SOURCE_CONDITION}`, '--input-type=module', '-e', script],
      { cwd: PROJECT_ROOT, env: { PATH: process.env.PATH ?? '' } },
    );
    const endpoint = stdout.trim().split('\n').at(-1) ?? '';
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The JVM was SIGKILLed as its parent exited: nothing answers there.
    await expect(fetch(endpoint, { signal: AbortSignal.timeout(5_000) })).rejects.toThrow();
  }, 60_000);
});

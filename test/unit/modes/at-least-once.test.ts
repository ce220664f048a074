import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, DeleteMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  TransactWriteCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseAppliedOnBalance } from '../../../contract/ledger-keys.js';
import { processBatch } from '../../../modes/at-least-once.js';
import { consumerDeps, Killed, NOW } from '../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../support/sqs-events.js';

/** The credits sent, in order: UpdateItems on a balance item (the counters are STAT# items). */
const creditsOf = (ddb: ReturnType<typeof mockClient>): UpdateCommandInput[] =>
  ddb
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input as UpdateCommandInput)
    .filter((input) => String(input.Key?.sk).startsWith('BAL#'));

/** What an update sets or adds, by attribute name: its placeholders resolved. */
function written(input: UpdateCommandInput): Record<string, unknown> {
  const names = input.ExpressionAttributeNames ?? {};
  const values = input.ExpressionAttributeValues ?? {};
  const result: Record<string, unknown> = {};
  for (const action of (input.UpdateExpression ?? '').split(/\s*(?:SET|ADD)\s+|,\s*(?![^(]*\))/)) {
    const match = /^(#?\w+)\s*=?\s*(.*)$/.exec(action.trim());
    if (!match?.[1]) continue;
    const name = names[match[1]] ?? match[1];
    const value = /^:\w+$/.test(match[2] ?? '') ? values[match[2] ?? ''] : match[2];
    result[name] = value;
  }
  return result;
}

describe('at-least-once consumer', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
  });

  it('credits every message with ONE UpdateItem and never deletes: Lambda acknowledges on return', async () => {
    const event = sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody()), sqsRecord(messageBody()));

    const result = await processBatch(event, lambdaContext, consumerDeps('at-least-once'));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(creditsOf(ddb)).toHaveLength(3);
    // The production shape: no transaction (it would carry a ClientRequestToken and change retries).
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(sqs.commandCalls(DeleteMessageBatchCommand)).toHaveLength(0);
    expect(sqs.commandCalls(DeleteMessageCommand)).toHaveLength(0);
  });

  it('sends the credit unconditionally, its application added to the same write by the lab', async () => {
    const body = messageBody({ runId: 'run-7', eventId: 'evt-x', accountId: 'acct-3', amountCents: 1234 });

    await processBatch(
      sqsEvent(sqsRecord(body, { receiveCount: 2 })),
      lambdaContext,
      consumerDeps('at-least-once'),
    );

    const [credit] = creditsOf(ddb);
    expect(credit).toMatchObject({ Key: { pk: 'RUN#run-7#MODE#at-least-once', sk: 'BAL#acct-3' } });
    expect(credit?.ConditionExpression).toBeUndefined();
    expect(credit?.UpdateExpression).toMatch(/ADD balanceCents :amount/);
    expect(credit?.ExpressionAttributeValues?.[':amount']).toBe(1234);
    const attributes = written(credit ?? { TableName: '', Key: {} });
    expect(attributes.accountId).toBe('acct-3');
    expect(String(attributes['APP#evt-x'])).toMatch(/^list_append\(if_not_exists\(#\w+, :\w+\), :\w+\)$/);
    const entry = Object.entries(credit?.ExpressionAttributeValues ?? {}).find(([alias]) =>
      alias.endsWith('_entry'),
    )?.[1] as string[];
    expect(entry.map(parseAppliedOnBalance)).toEqual([
      { receiveCount: 2, appliedAtMs: NOW, amountCents: 1234 },
    ]);
  });

  it('reports an invalid body as a failed item and never applies it; the others still count', async () => {
    const bad = sqsRecord(JSON.stringify({ eventId: 'e', runId: 'r' }));
    const good = sqsRecord(messageBody());

    const result = await processBatch(sqsEvent(bad, good), lambdaContext, consumerDeps('at-least-once'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });
    expect(creditsOf(ddb)).toHaveLength(1);
  });

  it('reports a throttled credit as a failed item', async () => {
    ddb
      .on(UpdateCommand, { Key: { sk: 'BAL#acct-1' } }, false)
      .rejects(new ProvisionedThroughputExceededException({ message: 'slow', $metadata: {} }));
    const record = sqsRecord(messageBody({ accountId: 'acct-1' }));

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('at-least-once'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
  });

  it('crashes after applying a message and before the batch is acknowledged', async () => {
    const deps = consumerDeps('at-least-once', { crashRate: 1 });

    await expect(
      deps.untilKilled(
        processBatch(sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody())), lambdaContext, deps),
      ),
    ).rejects.toThrow(Killed);

    expect(creditsOf(ddb)).toHaveLength(1);
    expect(deps.kills).toBe(1);
  });
});

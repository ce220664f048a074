import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { payloadHash } from '../../../contract/message.js';
import { processBatch } from '../../../modes/entry-upsert.js';
import { consumerDeps, Killed } from '../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../support/sqs-events.js';

/** The entry writes of a run of the handler (the counters are UpdateItems too). */
const entryWrites = (ddb: ReturnType<typeof mockClient>) =>
  ddb
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input)
    .filter((input) => String(input.Key?.sk).startsWith('APP#'));

describe('entry-upsert consumer', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
  });

  it('writes ONE item per event, keyed on the event id, that SETs the entry: no balance item, no transaction', async () => {
    const body = messageBody({ runId: 'run-3', eventId: 'evt-e', accountId: 'acct-9', amountCents: 4200 });

    const result = await processBatch(sqsEvent(sqsRecord(body)), lambdaContext, consumerDeps('entry-upsert'));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    const [entry, ...others] = entryWrites(ddb);
    expect(others).toHaveLength(0);
    expect(entry).toMatchObject({
      Key: { pk: 'RUN#run-3#MODE#entry-upsert', sk: 'APP#evt-e' },
      ConditionExpression: 'attribute_not_exists(#pk) OR #payloadHash = :payloadHash',
      ExpressionAttributeValues: expect.objectContaining({
        ':payloadHash': payloadHash({ accountId: 'acct-9', amountCents: 4200 }),
      }),
    });
    const aliasOf = (name: string) =>
      Object.entries(entry?.ExpressionAttributeNames ?? {}).find(
        ([, attribute]) => attribute === name,
      )?.[0] ?? '?';
    const amount = aliasOf('amountCents');
    expect(entry?.ExpressionAttributeValues?.[`:${amount.slice(1)}`]).toBe(4200);
    expect(entry?.ExpressionAttributeValues?.[`:${aliasOf('accountId').slice(1)}`]).toBe('acct-9');
    // SET, never ADD, for the money: a second write of the entry cannot change the balance. Only the
    // lab's `writes` evidence is added.
    expect(entry?.UpdateExpression).toMatch(new RegExp(`^SET .*${amount} = :${amount.slice(1)}`));
    expect(entry?.UpdateExpression).toMatch(new RegExp(`ADD ${aliasOf('writes')} :\\w+$`));
    const balances = ddb
      .commandCalls(UpdateCommand)
      .filter((call) => String(call.args[0].input.Key?.sk).startsWith('BAL#'));
    expect(balances).toHaveLength(0);
  });

  it('counts a repeat (the entry was there already) as an absorbed duplicate, and acknowledges it', async () => {
    // ALL_OLD: the old entry comes back, so it was there already.
    ddb.on(UpdateCommand, { Key: { sk: 'APP#evt-r' } }).resolves({ Attributes: { payloadHash: 'same' } });
    const record = sqsRecord(messageBody({ eventId: 'evt-r' }), { receiveCount: 2 });

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('entry-upsert'));

    expect(result).toEqual({ batchItemFailures: [] });
    const counters = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.sk);
    expect(counters).toContain('STAT#suppressedDuplicates');
  });

  it('fails a reused event id with another payload instead of overwriting the first entry', async () => {
    ddb
      .on(UpdateCommand, { Key: { sk: 'APP#evt-u' } })
      .rejects(
        new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }),
      );
    const record = sqsRecord(messageBody({ eventId: 'evt-u', amountCents: 999 }));

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('entry-upsert'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
  });

  it('crashes after writing the entry and before the batch is acknowledged', async () => {
    const deps = consumerDeps('entry-upsert', { crashRate: 1 });

    await expect(
      deps.untilKilled(
        processBatch(sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody())), lambdaContext, deps),
      ),
    ).rejects.toThrow(Killed);

    // The first entry was written, then the kill: before the second and before returning.
    expect(entryWrites(ddb)).toHaveLength(1);
    expect(deps.kills).toBe(1);
  });
});

import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { processBatch } from '../../../modes/state-upsert.js';
import { conditionFailedAtVersion, consumerDeps, Killed } from '../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../support/sqs-events.js';

type Ddb = ReturnType<typeof mockClient>;
const writes = (ddb: Ddb) => ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
const keys = (ddb: Ddb) => writes(ddb).map((input) => String(input.Key?.sk));
describe('state-upsert consumer', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
  });

  it('SETs the state and its version with ONE conditional UpdateItem (only if the stored version is older), then records the event', async () => {
    const body = messageBody({
      runId: 'run-3',
      eventId: 'evt-s',
      accountId: 'acct-9',
      amountCents: 4200,
      seq: 7,
      balanceAfterCents: 12_345,
    });

    const result = await processBatch(sqsEvent(sqsRecord(body)), lambdaContext, consumerDeps('state-upsert'));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    // The state write first: the record attests a durable state. Then nothing but counters.
    expect(keys(ddb).filter((sk) => !sk.startsWith('STAT#'))).toEqual(['BAL#acct-9', 'APP#evt-s']);
    const [state, record] = writes(ddb).filter((input) => !String(input.Key?.sk).startsWith('STAT#'));
    expect(state).toMatchObject({
      Key: { pk: 'RUN#run-3#MODE#state-upsert', sk: 'BAL#acct-9' },
      ConditionExpression: 'attribute_not_exists(#version) OR #version < :version',
      ExpressionAttributeNames: expect.objectContaining({ '#s0': 'balanceCents', '#version': 'version' }),
      ExpressionAttributeValues: expect.objectContaining({ ':s0': 12_345, ':version': 7 }),
    });
    // SET, never ADD: writing a state twice cannot change the balance.
    expect(state?.UpdateExpression).toMatch(/^SET #s0 = :s0, #version = :version/);
    expect(state?.UpdateExpression).not.toMatch(/ADD/);
    expect(record).toMatchObject({
      Key: { pk: 'RUN#run-3#MODE#state-upsert', sk: 'APP#evt-s' },
      ExpressionAttributeValues: expect.objectContaining({
        ':seq': 7,
        ':balanceAfterCents': 12_345,
        ':amount': 4200,
        ':one': 1,
        ':stateOutcome': 'written',
      }),
    });
    expect(keys(ddb)).not.toContain('STAT#superseded');
  });

  it('counts an event whose state a newer one already replaced as superseded, records it, and acknowledges it', async () => {
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-1' } }).rejects(conditionFailedAtVersion(9));
    const record = sqsRecord(messageBody({ eventId: 'evt-old', seq: 3 }));

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('state-upsert'));

    expect(result).toEqual({ batchItemFailures: [] });
    const app = writes(ddb).find((input) => input.Key?.sk === 'APP#evt-old');
    expect(app?.ExpressionAttributeValues).toMatchObject({ ':stateOutcome': 'superseded' });
    expect(keys(ddb)).toContain('STAT#superseded');
    expect(keys(ddb)).not.toContain('STAT#suppressedDuplicates');
  });

  it('counts a repeat (its own version stored, its record there) as a suppressed duplicate, not as superseded', async () => {
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-1' } }).rejects(conditionFailedAtVersion(4));
    ddb.on(UpdateCommand, { Key: { sk: 'APP#evt-r' } }).resolves({ Attributes: { writes: 1 } });
    const record = sqsRecord(messageBody({ eventId: 'evt-r', seq: 4 }), { receiveCount: 2 });

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('state-upsert'));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(keys(ddb)).toContain('STAT#suppressedDuplicates');
    expect(keys(ddb)).not.toContain('STAT#superseded');
  });

  it('fails a record whose state write fails otherwise, and writes no record for it', async () => {
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-1' } }).rejects(new Error('throttled'));
    const record = sqsRecord(messageBody({ eventId: 'evt-t' }));

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('state-upsert'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(keys(ddb)).not.toContain('APP#evt-t');
  });

  it('fails a body without its state (balanceAfterCents): a delta is no state', async () => {
    const { balanceAfterCents: _, ...delta } = messageBody();
    const record = sqsRecord(JSON.stringify(delta));

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('state-upsert'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(keys(ddb).filter((sk) => sk.startsWith('BAL#'))).toHaveLength(0);
  });

  it('crashes after the write and the record, before the batch is acknowledged', async () => {
    const deps = consumerDeps('state-upsert', { crashRate: 1 });

    await expect(
      deps.untilKilled(
        processBatch(
          sqsEvent(sqsRecord(messageBody({ seq: 1 })), sqsRecord(messageBody({ seq: 2 }))),
          lambdaContext,
          deps,
        ),
      ),
    ).rejects.toThrow(Killed);

    // The first event's state and record were written, then the kill: before the second.
    expect(keys(ddb).filter((sk) => /^(BAL|APP)#/.test(sk))).toHaveLength(2);
    expect(deps.kills).toBe(1);
  });
});

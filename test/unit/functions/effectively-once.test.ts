import {
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { processBatch } from '../../../functions/effectively-once.js';
import { payloadHash } from '../../../functions/shared/message.js';
import { consumerDeps, Killed } from '../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../support/sqs-events.js';

function cancelled(...codes: string[]): TransactionCanceledException {
  return new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}

/** The marker's condition failed; DynamoDB returns the existing marker (ReturnValuesOnConditionCheckFailure). */
function markerExists(existing: { accountId: string; amountCents: number }): TransactionCanceledException {
  return new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: [
      { Code: 'ConditionalCheckFailed', Item: { payloadHash: { S: payloadHash(existing) } } },
      { Code: 'None' },
    ],
  });
}

describe('effectively-once consumer', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
  });

  it('sends ONE transaction: a conditional marker keyed on (runId, eventId) and the balance update', async () => {
    const body = messageBody({ runId: 'run-9', eventId: 'evt-1', accountId: 'acct-2', amountCents: 700 });

    const result = await processBatch(
      sqsEvent(sqsRecord(body)),
      lambdaContext,
      consumerDeps('effectively-once'),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    const writes = ddb.commandCalls(TransactWriteCommand);
    expect(writes).toHaveLength(1);
    const [marker, balance] = writes[0]?.args[0].input.TransactItems ?? [];
    expect(marker?.Put).toBeUndefined();
    expect(marker?.Update).toMatchObject({
      Key: { pk: 'RUN#run-9#MODE#effectively-once', sk: 'APP#evt-1' },
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    // The marker counts its own applications, so a broken guard would show as a duplicate.
    expect(marker?.Update?.UpdateExpression).toMatch(/^ADD #applications :one SET /);
    expect(marker?.Update?.ExpressionAttributeValues?.[':one']).toBe(1);
    const written = Object.fromEntries(
      Object.entries(marker?.Update?.ExpressionAttributeNames ?? {}).map(([alias, name]) => [
        name,
        marker?.Update?.ExpressionAttributeValues?.[`:${alias.slice(1)}`],
      ]),
    );
    expect(written).toMatchObject({
      eventId: 'evt-1',
      accountId: 'acct-2',
      amountCents: 700,
      payloadHash: payloadHash({ accountId: 'acct-2', amountCents: 700 }),
    });
    expect(balance?.Update?.Key).toEqual({ pk: 'RUN#run-9#MODE#effectively-once', sk: 'BAL#acct-2' });
  });

  it('fails a reused event id whose marker holds another amount, instead of skipping it as a duplicate', async () => {
    const body = messageBody({ accountId: 'acct-1', amountCents: 999 });
    ddb.on(TransactWriteCommand).rejects(markerExists({ accountId: 'acct-1', amountCents: 250 }));
    const record = sqsRecord(body, { receiveCount: 2 });

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('effectively-once'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    const counters = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.sk);
    expect(counters).not.toContain('STAT#suppressedDuplicates');
  });

  it('skips a redelivery whose marker holds the same payload', async () => {
    const body = messageBody({ accountId: 'acct-1', amountCents: 250 });
    ddb.on(TransactWriteCommand).rejects(markerExists({ accountId: 'acct-1', amountCents: 250 }));

    const result = await processBatch(
      sqsEvent(sqsRecord(body, { receiveCount: 2 })),
      lambdaContext,
      consumerDeps('effectively-once'),
    );

    expect(result).toEqual({ batchItemFailures: [] });
  });

  it('skips a redelivery whose marker exists (ConditionalCheckFailed) and counts a suppressed duplicate', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    const body = messageBody({ runId: 'run-9' });

    const result = await processBatch(
      sqsEvent(sqsRecord(body, { receiveCount: 2 })),
      lambdaContext,
      consumerDeps('effectively-once'),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    const suppressed = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.sk);
    expect(suppressed).toContain('STAT#suppressedDuplicates');
  });

  it.each([
    ['TransactionConflict on the marker', cancelled('TransactionConflict', 'None')],
    ['TransactionConflict on the balance', cancelled('None', 'TransactionConflict')],
    ['a failed condition on the balance, not the marker', cancelled('None', 'ConditionalCheckFailed')],
    ['throttling inside the transaction', cancelled('ThrottlingError', 'None')],
    [
      'throttling of the request',
      new ProvisionedThroughputExceededException({ message: 'slow', $metadata: {} }),
    ],
  ])('reports %s as a failed item, never as applied', async (_name, error) => {
    ddb.on(TransactWriteCommand).rejects(error);
    const record = sqsRecord(messageBody());

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('effectively-once'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    const counters = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.sk);
    expect(counters).not.toContain('STAT#suppressedDuplicates');
  });

  it('retries a transaction cancelled by a conflict, and applies it', async () => {
    ddb.on(TransactWriteCommand).rejectsOnce(cancelled('None', 'TransactionConflict')).resolves({});
    const record = sqsRecord(messageBody());

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('effectively-once'));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('gives up after three attempts of a persistent conflict, and does not retry other cancellations', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled('TransactionConflict', 'None'));
    await processBatch(sqsEvent(sqsRecord(messageBody())), lambdaContext, consumerDeps('effectively-once'));
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(3);
    // Each retry is counted, so hot keys show in the report.
    const retries = ddb
      .commandCalls(UpdateCommand)
      .filter((call) => call.args[0].input.Key?.sk === 'STAT#retriedCancellations');
    expect(retries).toHaveLength(2);

    ddb.reset();
    ddb.on(UpdateCommand).resolves({});
    ddb.on(TransactWriteCommand).rejects(cancelled('None', 'ValidationError'));
    await processBatch(sqsEvent(sqsRecord(messageBody())), lambdaContext, consumerDeps('effectively-once'));
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('never applies an invalid body and reports it as failed', async () => {
    const record = sqsRecord(JSON.stringify({ eventId: 'e', runId: 'r', accountId: 'a' }));

    const result = await processBatch(sqsEvent(record), lambdaContext, consumerDeps('effectively-once'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('crashes after applying a message and before the batch is acknowledged', async () => {
    const deps = consumerDeps('effectively-once', { crashRate: 1 });

    await expect(
      processBatch(sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody())), lambdaContext, deps),
    ).rejects.toThrow(Killed);

    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(deps.kills).toBe(1);
  });
});

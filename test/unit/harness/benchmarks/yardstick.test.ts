import { SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { processBatch } from '../../../../harness/benchmarks/yardstick.js';
import { consumerDeps } from '../../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../../support/sqs-events.js';

/** The credits of a batch (the delivery counter is an UpdateItem too). */
const credits = (ddb: ReturnType<typeof mockClient>) =>
  ddb
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input)
    .filter((input) => String(input.Key?.sk).startsWith('BAL#'));

describe('the bench yardstick: at-least-once in its production shape', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
  });

  it('credits with ONE UpdateItem that ADDs to the balance: no transaction, no application record', async () => {
    const body = messageBody({ runId: 'run-y', eventId: 'evt-y', accountId: 'acct-3', amountCents: 4000 });

    const result = await processBatch(
      sqsEvent(sqsRecord(body)),
      lambdaContext,
      consumerDeps('at-least-once'),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
    expect(credits(ddb)).toEqual([
      {
        TableName: expect.any(String),
        Key: { pk: 'RUN#run-y#MODE#at-least-once', sk: 'BAL#acct-3' },
        UpdateExpression: 'ADD balanceCents :amount',
        ExpressionAttributeValues: { ':amount': 4000 },
      },
    ]);
    // Nothing else is written per message: no item keyed on the event id.
    const keys = ddb.commandCalls(UpdateCommand).map((call) => String(call.args[0].input.Key?.sk));
    expect(keys.filter((sk) => sk.startsWith('APP#'))).toEqual([]);
  });

  it('applies a redelivery again: it adds the amount a second time (what at-least-once means)', async () => {
    const body = messageBody({ eventId: 'evt-twice', amountCents: 250 });

    await processBatch(sqsEvent(sqsRecord(body)), lambdaContext, consumerDeps('at-least-once'));
    await processBatch(
      sqsEvent(sqsRecord(body, { receiveCount: 2 })),
      lambdaContext,
      consumerDeps('at-least-once'),
    );

    expect(credits(ddb).map((input) => input.ExpressionAttributeValues?.[':amount'])).toEqual([250, 250]);
  });

  it('reports a record whose write failed, and acknowledges the others', async () => {
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-bad' } }).rejects(new Error('throttled'));
    const good = sqsRecord(messageBody({ accountId: 'acct-ok' }));
    const bad = sqsRecord(messageBody({ accountId: 'acct-bad' }));

    const result = await processBatch(sqsEvent(good, bad), lambdaContext, consumerDeps('at-least-once'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });
  });
});

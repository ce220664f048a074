import {
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, DeleteMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { processBatch } from '../../../functions/at-least-once.js';
import { consumerDeps, Killed } from '../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../support/sqs-events.js';

describe('at-least-once consumer', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
  });

  it('applies every message and never deletes: Lambda acknowledges on return', async () => {
    const event = sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody()), sqsRecord(messageBody()));

    const result = await processBatch(event, lambdaContext, consumerDeps('at-least-once'));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(3);
    expect(sqs.commandCalls(DeleteMessageBatchCommand)).toHaveLength(0);
    expect(sqs.commandCalls(DeleteMessageCommand)).toHaveLength(0);
  });

  it('writes an unconditional application record per delivery with the balance update in one transaction', async () => {
    const body = messageBody({ runId: 'run-7', eventId: 'evt-x', accountId: 'acct-3', amountCents: 1234 });
    const record = sqsRecord(body, { receiveCount: 2 });

    await processBatch(sqsEvent(record), lambdaContext, consumerDeps('at-least-once'));

    const [write] = ddb.commandCalls(TransactWriteCommand);
    const [put, update] = write?.args[0].input.TransactItems ?? [];
    expect(put?.Put?.ConditionExpression).toBeUndefined();
    expect(put?.Put?.Item).toMatchObject({
      pk: 'RUN#run-7#MODE#at-least-once',
      sk: `APP#evt-x#2#${record.messageId}#req-1#0`,
      eventId: 'evt-x',
      amountCents: 1234,
      receiveCount: 2,
    });
    expect(update?.Update).toMatchObject({
      Key: { pk: 'RUN#run-7#MODE#at-least-once', sk: 'BAL#acct-3' },
      UpdateExpression: expect.stringContaining('ADD balanceCents :amount'),
      ExpressionAttributeValues: expect.objectContaining({ ':amount': 1234 }),
    });
  });

  it('reports an invalid body as a failed item and never applies it; the others still count', async () => {
    const bad = sqsRecord(JSON.stringify({ ...messageBody(), extra: true }));
    const good = sqsRecord(messageBody());

    const result = await processBatch(sqsEvent(bad, good), lambdaContext, consumerDeps('at-least-once'));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('reports a throttled write as a failed item', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }))
      .resolves({});
    const throttled = sqsRecord(messageBody());

    const result = await processBatch(
      sqsEvent(throttled, sqsRecord(messageBody())),
      lambdaContext,
      consumerDeps('at-least-once'),
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: throttled.messageId }] });
  });

  it('retries a transaction cancelled by throttling, then applies it once', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(
        new TransactionCanceledException({
          message: 'cancelled',
          $metadata: {},
          CancellationReasons: [{ Code: 'ThrottlingError' }, { Code: 'None' }],
        }),
      )
      .resolves({});

    const result = await processBatch(
      sqsEvent(sqsRecord(messageBody())),
      lambdaContext,
      consumerDeps('at-least-once'),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('crashes after applying a message and before the batch is acknowledged', async () => {
    const deps = consumerDeps('at-least-once', { crashRate: 1 });

    await expect(
      deps.untilKilled(
        processBatch(sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody())), lambdaContext, deps),
      ),
    ).rejects.toThrow(Killed);

    // Exactly the first message was applied; the crash came before the second and before returning.
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(deps.kills).toBe(1);
    const crashCounter = ddb
      .commandCalls(UpdateCommand)
      .find((call) => call.args[0].input.Key?.sk === 'STAT#crashes');
    expect(crashCounter).toBeDefined();
  });
});

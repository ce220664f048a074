import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DeleteFailedError } from '@sqs-delivery-semantics/consumer-cores/at-most-once';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { processBatch } from '../../../modes/at-most-once.js';
import { consumerDeps, Killed } from '../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../support/sqs-events.js';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/at-most-once';
/** The work's single-attempt client: mocked like every document client here. */
const WORK_DDB = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1', maxAttempts: 1 }));

/** The events credited, in order: each credit's application attribute (`APP#<eventId>`) names it. */
const creditedEvents = (ddb: ReturnType<typeof mockClient>): string[] =>
  ddb
    .commandCalls(UpdateCommand)
    .flatMap((call) => Object.values(call.args[0].input.ExpressionAttributeNames ?? {}) as string[])
    .filter((name) => name.startsWith('APP#'))
    .map((name) => name.slice('APP#'.length));

describe('at-most-once consumer', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  let calls: string[];

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    calls = [];
    // A credit is one UpdateItem on a balance item; the lab's counters are updates of STAT# items.
    ddb.on(UpdateCommand).callsFake((input: { Key: { sk: string } }) => {
      calls.push(input.Key.sk.startsWith('BAL#') ? 'write' : 'count');
      return {};
    });
    sqs.on(DeleteMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => {
      calls.push('delete');
      return { Successful: input.Entries.map(({ Id }) => ({ Id })), Failed: [] };
    });
  });

  it('deletes the batch before the first ledger write', async () => {
    const event = sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody()));

    await processBatch(event, lambdaContext, {
      ...consumerDeps('at-most-once'),
      queueUrl: QUEUE_URL,
      workDdb: WORK_DDB,
    });

    expect(calls).toEqual(['count', 'delete', 'write', 'write']);
    const [deleteCall] = sqs.commandCalls(DeleteMessageBatchCommand);
    expect(deleteCall?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      Entries: event.Records.map((record, index) => ({
        Id: String(index),
        ReceiptHandle: record.receiptHandle,
      })),
    });
  });

  it('deletes in chunks of 10, the DeleteMessageBatch limit', async () => {
    const records = Array.from({ length: 23 }, () => sqsRecord(messageBody()));

    await processBatch(sqsEvent(...records), lambdaContext, {
      ...consumerDeps('at-most-once'),
      queueUrl: QUEUE_URL,
      workDdb: WORK_DDB,
    });

    const sizes = sqs
      .commandCalls(DeleteMessageBatchCommand)
      .map((call) => call.args[0].input.Entries?.length);
    expect(sizes).toEqual([10, 10, 3]);
    expect(calls.indexOf('write')).toBeGreaterThan(calls.lastIndexOf('delete'));
  });

  it('never applies a record SQS did not delete, and fails the invocation so it is redelivered', async () => {
    sqs.on(DeleteMessageBatchCommand).callsFake(() => {
      calls.push('delete');
      return {
        Successful: [{ Id: '0' }],
        Failed: [{ Id: '1', Code: 'ReceiptHandleIsInvalid', SenderFault: true }],
      };
    });
    const applied = messageBody();
    const notDeleted = sqsRecord(messageBody());

    const result = processBatch(sqsEvent(sqsRecord(applied), notDeleted), lambdaContext, {
      ...consumerDeps('at-most-once'),
      queueUrl: QUEUE_URL,
      workDdb: WORK_DDB,
    });

    await expect(result).rejects.toThrow(DeleteFailedError);
    expect(creditedEvents(ddb)).toEqual([applied.eventId]);
  });

  it('still applies the chunks it deleted when a later DeleteMessageBatch call throws, then fails the invocation', async () => {
    let call = 0;
    sqs.on(DeleteMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => {
      call += 1;
      calls.push('delete');
      if (call === 2) throw new Error('SQS unavailable');
      return { Successful: input.Entries.map(({ Id }) => ({ Id })), Failed: [] };
    });
    const bodies = Array.from({ length: 15 }, () => messageBody());

    const result = processBatch(sqsEvent(...bodies.map((body) => sqsRecord(body))), lambdaContext, {
      ...consumerDeps('at-most-once'),
      queueUrl: QUEUE_URL,
      workDdb: WORK_DDB,
    });

    await expect(result).rejects.toThrow(DeleteFailedError);
    expect(creditedEvents(ddb)).toEqual(bodies.slice(0, 10).map((body) => body.eventId));
  });

  it('does not apply an invalid body (already deleted: lost) and still applies the rest', async () => {
    const valid = messageBody();
    const result = await processBatch(
      sqsEvent(sqsRecord(JSON.stringify({ ...messageBody(), amountCents: 1.5 })), sqsRecord(valid)),
      lambdaContext,
      { ...consumerDeps('at-most-once'), queueUrl: QUEUE_URL, workDdb: WORK_DDB },
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(creditedEvents(ddb)).toEqual([valid.eventId]);
  });

  it('crashes after the delete and before applying the message', async () => {
    const deps = consumerDeps('at-most-once', { crashRate: 1 });

    await expect(
      deps.untilKilled(
        processBatch(sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody())), lambdaContext, {
          ...deps,
          queueUrl: QUEUE_URL,
          workDdb: WORK_DDB,
        }),
      ),
    ).rejects.toThrow(Killed);

    expect(deps.kills).toBe(1);
    expect(calls.filter((call) => call !== 'count')).toEqual(['delete']);
    expect(creditedEvents(ddb)).toEqual([]);
  });

  it('records a crash on a poison body under the event its message attribute names', async () => {
    const deps = consumerDeps('at-most-once', { crashRate: 1 });
    const poison = {
      ...sqsRecord('{"eventId": broken'),
      messageAttributes: {
        runId: { stringValue: 'run-p', dataType: 'String' },
        eventId: { stringValue: 'evt-poison', dataType: 'String' },
      },
    };

    await expect(
      deps.untilKilled(
        processBatch(sqsEvent(poison), lambdaContext, { ...deps, queueUrl: QUEUE_URL, workDdb: WORK_DDB }),
      ),
    ).rejects.toThrow(Killed);

    const keys = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.sk);
    expect(keys).toContain('CRASH#evt-poison#1');
  });

  it('counts every record as a delivery before deleting or applying', async () => {
    await processBatch(
      sqsEvent(sqsRecord(messageBody({ runId: 'run-a' })), sqsRecord(messageBody({ runId: 'run-a' }))),
      lambdaContext,
      { ...consumerDeps('at-most-once'), queueUrl: QUEUE_URL, workDdb: WORK_DDB },
    );

    const [count] = ddb.commandCalls(UpdateCommand);
    expect(calls[0]).toBe('count');
    expect(count?.args[0].input).toMatchObject({
      Key: { pk: 'RUN#run-a#MODE#at-most-once', sk: 'STAT#deliveries' },
      ExpressionAttributeValues: { ':n': 2 },
    });
  });
});

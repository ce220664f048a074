import { ChangeMessageVisibilityBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { fifoIdsOf } from '../../../contract/message.js';
import { processBatch } from '../../../modes/fifo-versioned.js';
import { conditionFailedAtVersion, consumerDeps, Killed } from '../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../support/sqs-events.js';

/** The core's conditions: the account one position behind the event, or no version yet. */
const NEXT_IN_ORDER = '#version = :previous';
const FIRST_OF_ACCOUNT = 'attribute_not_exists(#version)';
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/fifo-versioned.fifo';
type Ddb = ReturnType<typeof mockClient>;
/** The record as a FIFO queue delivers it: its message group (the producer's, run and account) among its attributes. */
const inGroup = (record: SQSRecord, like?: SQSRecord): SQSRecord => {
  const { runId, accountId, eventId } = JSON.parse((like ?? record).body) as Record<string, string>;
  return {
    ...record,
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:fifo-versioned.fifo',
    attributes: {
      ...record.attributes,
      MessageGroupId: fifoIdsOf(runId ?? '', accountId ?? '', eventId ?? '').MessageGroupId,
    },
  };
};
const writes = (ddb: Ddb) => ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
const credit = (ddb: Ddb) => writes(ddb).find((input) => String(input.Key?.sk).startsWith('BAL#'));
/** The balance and event items written, in order (no counters, no crash records). */
const items = (ddb: Ddb) =>
  writes(ddb)
    .map((input) => String(input.Key?.sk))
    .filter((sk) => /^(BAL|APP)#/.test(sk));
describe('fifo-versioned consumer', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(UpdateCommand).resolves({});
  });

  it('credits with ONE conditional UpdateItem (ADD the amount, SET version = seq, only if the version is seq − 1), the application riding on it', async () => {
    const body = messageBody({
      runId: 'run-f',
      eventId: 'evt-f',
      accountId: 'acct-3',
      amountCents: 700,
      seq: 5,
    });

    const result = await processBatch(sqsEvent(sqsRecord(body)), lambdaContext, {
      ...consumerDeps('fifo-versioned'),
      queueUrl: QUEUE_URL,
    });

    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    // One write: the evidence is in the credit, under its condition.
    expect(items(ddb)).toEqual(['BAL#acct-3']);
    expect(credit(ddb)).toMatchObject({
      Key: { pk: 'RUN#run-f#MODE#fifo-versioned', sk: 'BAL#acct-3' },
      ConditionExpression: NEXT_IN_ORDER,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      ExpressionAttributeNames: expect.objectContaining({ '#d0': 'balanceCents', '#version': 'version' }),
      ExpressionAttributeValues: expect.objectContaining({ ':d0': 700, ':seq': 5, ':previous': 4 }),
    });
    // The core's credit, and the lab's account, TTL and application added to its SET.
    expect(credit(ddb)?.UpdateExpression).toMatch(
      /^SET #version = :seq, #lab1 = :lab1, #lab2 = :lab2, #lab3 = list_append\(if_not_exists\(#lab3, :lab3_none\), :lab3_entry\) ADD #d0 :d0$/,
    );
    expect(credit(ddb)?.ExpressionAttributeNames).toMatchObject({
      '#lab1': 'accountId',
      '#lab2': 'expiresAt',
      '#lab3': 'APP#evt-f',
    });
  });

  it("credits an account's first event only if no version is stored", async () => {
    await processBatch(sqsEvent(sqsRecord(messageBody({ accountId: 'acct-new', seq: 1 }))), lambdaContext, {
      ...consumerDeps('fifo-versioned'),
      queueUrl: QUEUE_URL,
    });

    expect(credit(ddb)?.ConditionExpression).toBe(FIRST_OF_ACCOUNT);
    expect(credit(ddb)?.ExpressionAttributeValues).not.toHaveProperty(':previous');
  });

  it('skips a repeat (its own seq or a later one stored): nothing written, counted as a suppressed duplicate', async () => {
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-1' } }).rejects(conditionFailedAtVersion(6));
    const record = sqsRecord(messageBody({ eventId: 'evt-r', seq: 4 }), { receiveCount: 2 });

    const result = await processBatch(sqsEvent(record), lambdaContext, {
      ...consumerDeps('fifo-versioned'),
      queueUrl: QUEUE_URL,
    });

    expect(result).toEqual({ batchItemFailures: [] });
    expect(items(ddb)).toEqual(['BAL#acct-1']);
    expect(writes(ddb).map((input) => input.Key?.sk)).toContain('STAT#suppressedDuplicates');
  });

  it("fails a gap (the predecessor not applied) and every later record of its account's group, applies other groups, and releases the blocked records at once", async () => {
    // The credit's condition fails, and nothing else is written for acct-1.
    ddb
      .on(UpdateCommand, { Key: { sk: 'BAL#acct-1' }, ConditionExpression: NEXT_IN_ORDER })
      .rejects(conditionFailedAtVersion(2));
    const first = inGroup(sqsRecord(messageBody({ accountId: 'acct-0', seq: 1 })));
    const gap = inGroup(sqsRecord(messageBody({ eventId: 'evt-gap', seq: 4 })));
    const otherGroup = inGroup(sqsRecord(messageBody({ accountId: 'acct-2', seq: 1 })));
    const laterInGroup = inGroup(sqsRecord(messageBody({ eventId: 'evt-5', seq: 5 })));

    const result = await processBatch(sqsEvent(first, gap, otherGroup, laterInGroup), lambdaContext, {
      ...consumerDeps('fifo-versioned'),
      queueUrl: QUEUE_URL,
    });

    expect(result).toEqual({
      batchItemFailures: [gap, laterInGroup].map((record) => ({ itemIdentifier: record.messageId })),
    });
    // acct-1's seq 5 was never tried: it would have gone before seq 4, which comes back first.
    // The refused credit is the gap path's only write: the verifier needs no mark of the consumer's
    // to count what a FIFO DLQ hides behind a group's head.
    expect(items(ddb)).toEqual(['BAL#acct-0', 'BAL#acct-1', 'BAL#acct-2']);
    // A gap cannot fill by waiting: the blocked records are visible again at once, to use up their
    // receives and reach the DLQ in order behind their predecessor.
    const releases = sqs.commandCalls(ChangeMessageVisibilityBatchCommand).map((call) => call.args[0].input);
    expect(releases).toEqual([
      {
        QueueUrl: QUEUE_URL,
        Entries: [gap, laterInGroup].map((record, index) => ({
          Id: String(index),
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: 0,
        })),
      },
    ]);
  });

  it('on a standard queue, fails a gap without releasing it: a release there would only spend its receives', async () => {
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-1' } }).rejects(conditionFailedAtVersion(2));
    const gap = sqsRecord(messageBody({ seq: 4 }));

    const result = await processBatch(sqsEvent(gap), lambdaContext, {
      ...consumerDeps('fifo-versioned'),
      queueUrl: QUEUE_URL,
    });

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: gap.messageId }] });
    expect(sqs.commandCalls(ChangeMessageVisibilityBatchCommand)).toHaveLength(0);
  });

  it('fails an invalid body and every later record of its group, as a FIFO batch must', async () => {
    const later = inGroup(sqsRecord(messageBody({ seq: 1 })));
    // An unreadable body in the same group (the group is the message's, not its body's).
    const invalid = inGroup(sqsRecord('{"not":"an event"}'), later);

    const result = await processBatch(sqsEvent(invalid, later), lambdaContext, {
      ...consumerDeps('fifo-versioned'),
      queueUrl: QUEUE_URL,
    });

    expect(result.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      invalid.messageId,
      later.messageId,
    ]);
    expect(items(ddb)).toEqual([]);
  });

  it('releases nothing when no record hit a gap: a failed write waits for its visibility timeout, as any retry', async () => {
    ddb.on(UpdateCommand, { Key: { sk: 'BAL#acct-1' } }).rejects(new Error('throttled'));
    const record = sqsRecord(messageBody({ seq: 3 }));

    const result = await processBatch(sqsEvent(record), lambdaContext, {
      ...consumerDeps('fifo-versioned'),
      queueUrl: QUEUE_URL,
    });

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(sqs.commandCalls(ChangeMessageVisibilityBatchCommand)).toHaveLength(0);
  });

  it('crashes after the credit, before the batch is acknowledged', async () => {
    const deps = consumerDeps('fifo-versioned', { crashRate: 1 });

    await expect(
      deps.untilKilled(
        processBatch(
          sqsEvent(sqsRecord(messageBody({ seq: 1 })), sqsRecord(messageBody({ seq: 2 }))),
          lambdaContext,
          { ...deps, queueUrl: QUEUE_URL },
        ),
      ),
    ).rejects.toThrow(Killed);

    expect(items(ddb)).toEqual(['BAL#acct-1']);
    expect(deps.kills).toBe(1);
  });
});

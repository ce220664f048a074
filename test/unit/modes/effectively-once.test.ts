import {
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { payloadHash } from '../../../contract/message.js';
import { DEFAULT_RETENTION, retentionOf } from '../../../contract/retention.js';
import { processBatch } from '../../../modes/effectively-once.js';
import { consumerDeps, Killed, NOW } from '../../support/consumer-deps.js';
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
      {
        Code: 'ConditionalCheckFailed',
        Item: { payloadHash: { S: payloadHash(existing) }, dedupeUntil: { N: '9999999999' } },
      },
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
      // No marker, or one whose dedupe window has ended: an expired marker is absent, deleted or not.
      ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(marker?.Update?.ExpressionAttributeNames).toMatchObject({
      '#pk': 'pk',
      '#dedupeUntil': 'dedupeUntil',
    });
    expect(marker?.Update?.ExpressionAttributeValues?.[':now']).toBe(Math.floor(NOW / 1000));
    // The lab's evidence: the marker counts its own applications, so a broken guard would show as a
    // duplicate. Added to the core's SET, with its condition untouched.
    expect(marker?.Update?.UpdateExpression).toMatch(/^SET #payloadHash = :payloadHash, .* ADD #\w+ :\w+$/);
    const [, applications, one] = / ADD (#\w+) (:\w+)$/.exec(marker?.Update?.UpdateExpression ?? '') ?? [];
    expect(marker?.Update?.ExpressionAttributeNames?.[applications ?? '']).toBe('applications');
    expect(marker?.Update?.ExpressionAttributeValues?.[one ?? '']).toBe(1);
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
      // The dedupe window is the marker retention; the item, the run's evidence, lives at least as long.
      dedupeUntil: Math.floor(NOW / 1000) + DEFAULT_RETENTION.markerTtlSeconds,
      expiresAt: Math.floor(NOW / 1000) + DEFAULT_RETENTION.evidenceTtlSeconds,
    });
    expect(balance?.Update?.Key).toEqual({ pk: 'RUN#run-9#MODE#effectively-once', sk: 'BAL#acct-2' });
  });

  describe('the age guard', () => {
    // A 100 s marker remembers for sure an event up to 90 s old (a tenth, 10 s, is the margin).
    const retention = retentionOf(100);
    const agedBy = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

    it('refuses an event older than its marker remembers before any credit, records the refusal and fails the record', async () => {
      const record = sqsRecord(messageBody({ runId: 'run-9', eventId: 'evt-old', createdAt: agedBy(91) }));

      const result = await processBatch(
        sqsEvent(record),
        lambdaContext,
        consumerDeps('effectively-once', { retention }),
      );

      expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
      expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
      const refusal = ddb
        .commandCalls(UpdateCommand)
        .map((call) => call.args[0].input)
        .find((input) => input.Key?.sk === 'OLD#evt-old');
      expect(refusal).toMatchObject({
        Key: { pk: 'RUN#run-9#MODE#effectively-once', sk: 'OLD#evt-old' },
        ExpressionAttributeValues: { ':one': 1, ':age': 91 },
      });
      expect(refusal?.UpdateExpression).toMatch(/^ADD refusals :one /);
    });

    it('refuses an event created further in the future than the margin: its age cannot be trusted', async () => {
      const record = sqsRecord(messageBody({ eventId: 'evt-ahead', createdAt: agedBy(-11) }));

      const result = await processBatch(
        sqsEvent(record),
        lambdaContext,
        consumerDeps('effectively-once', { retention }),
      );

      expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
      expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
      const keys = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.sk);
      expect(keys).toContain('OLD#evt-ahead');
    });

    it('applies an event exactly at the limit, and a too-old one with the guard off', async () => {
      await processBatch(
        sqsEvent(sqsRecord(messageBody({ createdAt: agedBy(90) }))),
        lambdaContext,
        consumerDeps('effectively-once', { retention }),
      );
      await processBatch(
        sqsEvent(sqsRecord(messageBody({ createdAt: agedBy(500) }))),
        lambdaContext,
        consumerDeps('effectively-once', { retention, ageGuard: false }),
      );

      expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
      const refusals = ddb
        .commandCalls(UpdateCommand)
        .filter((call) => String(call.args[0].input.Key?.sk).startsWith('OLD#'));
      expect(refusals).toHaveLength(0);
    });
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
      deps.untilKilled(
        processBatch(sqsEvent(sqsRecord(messageBody()), sqsRecord(messageBody())), lambdaContext, deps),
      ),
    ).rejects.toThrow(Killed);

    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(deps.kills).toBe(1);
  });
});

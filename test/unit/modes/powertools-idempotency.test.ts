import { createHash } from 'node:crypto';
import { BatchProcessor, EventType } from '@aws-lambda-powertools/batch';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
  TransactionCanceledException,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COUNTERS, counterKey, crashKey } from '../../../contract/ledger-keys.js';
import type { MessageBody } from '../../../contract/message.js';
import { DEFAULT_RETENTION } from '../../../contract/retention.js';
import type { PowertoolsConsumerDeps } from '../../../modes/families/powertools.js';
import * as byEventId from '../../../modes/powertools-idempotency.js';
import * as byMessageId from '../../../modes/powertools-message-id.js';
import { consumerDeps, IDEMPOTENCY_TABLE, Killed, NOW } from '../../support/consumer-deps.js';
import { messageBody, sqsEvent, sqsRecord } from '../../support/sqs-events.js';

/** The Powertools modes: one consumer (modes/families/powertools.ts), two keys. */
const POWERTOOLS_MODES = {
  'powertools-idempotency': byEventId,
  'powertools-message-id': byMessageId,
} as const;
type PowertoolsMode = keyof typeof POWERTOOLS_MODES;

/** What sets the two apart: the key, and the configuration that goes with it. */
const KEYED = {
  'powertools-idempotency': {
    // Powertools' key: `<prefix>#` + base64 MD5 of the JSON of what eventKeyJmesPath selects.
    keyOf: (_record: SQSRecord, body: MessageBody) => JSON.stringify([body.runId, body.eventId]),
    expirySeconds: DEFAULT_RETENTION.markerTtlSeconds,
    validatesPayload: true,
    // Keyed on the event id, its records remember for the marker retention: the age guard applies.
    ageGuarded: true,
  },
  'powertools-message-id': {
    keyOf: (record: SQSRecord) => JSON.stringify(record.messageId),
    expirySeconds: 3600, // Powertools' default, as in its docs' SQS batch example
    validatesPayload: false,
    // The docs' example has no guard, and none could help a key each redriven copy changes.
    ageGuarded: false,
  },
} as const satisfies Record<PowertoolsMode, unknown>;
const { processBatch } = byEventId;
const REMAINING_MS = 5_000;

/** A complete Lambda context: Powertools reads getRemainingTimeInMillis for the in-progress expiry. */
const context: Context = {
  awsRequestId: 'req-1',
  callbackWaitsForEmptyEventLoop: true,
  functionName: 'powertools-idempotency',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:powertools-idempotency',
  memoryLimitInMB: '256',
  logGroupName: '/aws/lambda/powertools-idempotency',
  logStreamName: 'stream',
  getRemainingTimeInMillis: () => REMAINING_MS,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

type Item = NonNullable<PutItemCommandInput['Item']>;

describe.each(Object.keys(POWERTOOLS_MODES) as PowertoolsMode[])('%s consumer', (MODE) => {
  const ddb = mockClient(DynamoDBDocumentClient); // the ledger (shared/ledger.ts)
  const raw = mockClient(DynamoDBClient); // Powertools' DynamoDBPersistenceLayer
  /** Every write, ledger and idempotency table alike, in the order it was sent. */
  let writes: string[];
  let puts: Item[];

  /** What one execution environment builds at module scope, with an injected kill. */
  const consumer = (
    options: Parameters<typeof consumerDeps>[1] = {},
  ): ReturnType<typeof consumerDeps> & PowertoolsConsumerDeps =>
    Object.assign(consumerDeps(MODE, options), {
      idempotency: POWERTOOLS_MODES[MODE].createIdempotency(IDEMPOTENCY_TABLE, new DynamoDBClient({})),
      processor: new BatchProcessor(EventType.SQS),
    });

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    ddb.reset();
    raw.reset();
    writes = [];
    puts = [];
    ddb.on(UpdateCommand).callsFake((input: { Key: { sk: string } }) => {
      writes.push(`counter ${input.Key.sk}`);
      return {};
    });
    ddb.on(TransactWriteCommand).callsFake(() => {
      writes.push('TransactWriteItems');
      return {};
    });
    raw.on(PutItemCommand).callsFake((input: PutItemCommandInput) => {
      writes.push(`PutItem ${input.Item?.status?.S}`);
      if (input.Item) puts.push(input.Item);
      return {};
    });
    raw.on(UpdateItemCommand).callsFake((input: UpdateItemCommandInput) => {
      writes.push(`UpdateItem ${input.ExpressionAttributeValues?.[':status']?.S}`);
      return {};
    });
    raw.on(DeleteItemCommand).callsFake(() => {
      writes.push('DeleteItem');
      return {};
    });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  /** An existing record, as DynamoDB returns it with the cancelled conditional put (ALL_OLD). */
  const existing = (item: Item, status: 'COMPLETED' | 'INPROGRESS', extra: Item = {}) =>
    new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: {},
      Item: { ...item, status: { S: status }, ...extra },
    });

  it('refuses an event older than its record remembers before any idempotency write, if the mode is guarded', async () => {
    const old = new Date(NOW - (DEFAULT_RETENTION.maxEventAgeSeconds + 1) * 1000).toISOString();
    const record = sqsRecord(messageBody({ eventId: 'evt-old', createdAt: old }));

    const result = await processBatch(sqsEvent(record), context, consumer());

    if (KEYED[MODE].ageGuarded) {
      expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
      expect(writes).toEqual([`counter ${counterKey(COUNTERS.deliveries)}`, 'counter OLD#evt-old']);
    } else {
      expect(result).toEqual({ batchItemFailures: [] });
      expect(writes).toContain('TransactWriteItems');
    }
  });

  it('writes INPROGRESS before the credit and COMPLETED after it, in that order', async () => {
    const result = await processBatch(sqsEvent(sqsRecord(messageBody())), context, consumer());

    expect(result).toEqual({ batchItemFailures: [] });
    expect(writes).toEqual([
      `counter ${counterKey(COUNTERS.deliveries)}`,
      'PutItem INPROGRESS',
      'TransactWriteItems',
      'UpdateItem COMPLETED',
    ]);
  });

  it('writes the INPROGRESS record conditionally, expiring with the invocation, keyed under the mode', async () => {
    await processBatch(sqsEvent(sqsRecord(messageBody())), context, consumer());

    const [put] = raw.commandCalls(PutItemCommand);
    expect(put?.args[0].input).toMatchObject({
      TableName: IDEMPOTENCY_TABLE,
      Item: {
        id: { S: expect.stringMatching(new RegExp(`^${MODE}#`)) },
        status: { S: 'INPROGRESS' },
        // registerLambdaContext: now + the invocation's remaining time, in milliseconds.
        in_progress_expiration: { N: String(NOW + REMAINING_MS) },
        // powertools-idempotency: the record outlives every redelivery of its message, like the
        // ledger's markers; powertools-message-id: Powertools' default hour.
        expiration: { N: String(NOW / 1000 + KEYED[MODE].expirySeconds) },
      },
      ConditionExpression: expect.stringContaining('attribute_not_exists(#id)'),
    });
    expect(put?.args[0].input.Item?.validation !== undefined).toBe(KEYED[MODE].validatesPayload);
  });

  it("keys on its key: which SQS messages share the first one's", async () => {
    const body = messageBody();
    const first = sqsRecord(body);
    const redelivered = sqsRecord(body, { receiveCount: 2, messageId: first.messageId }); // SQS again
    const resent = sqsRecord(body); // a producer re-send (or a redrive's copy): another message id
    const reused = sqsRecord({ ...body, accountId: 'acct-9', amountCents: 7 }); // same id, other payload
    const other = sqsRecord(messageBody());
    const otherRun = sqsRecord({ ...body, runId: 'run-2' });
    expect(resent.messageId).not.toBe(first.messageId);

    for (const record of [first, redelivered, resent, reused, other, otherRun]) {
      await processBatch(sqsEvent(record), context, consumer());
    }

    const [a, ...rest] = puts.map((item) => item.id?.S);
    expect(a).toBe(`${MODE}#${createHash('md5').update(KEYED[MODE].keyOf(first, body)).digest('base64')}`);
    const byEvent = MODE === 'powertools-idempotency';
    // The payload is validated by powertools-idempotency, not part of its key.
    expect(rest.map((id) => id === a)).toEqual([true, byEvent, byEvent, false, false]);
  });

  // Against a store that remembers: a COMPLETED key is found by the next conditional PutItem.
  it.each([
    ['an SQS redelivery (the same message id)', 'redelivery', 1, 1],
    ['a producer re-send (the same event, another message id)', 'resend', 1, 2],
    ["a DLQ redrive's copy (another message id, the receive count starting over)", 'redrive', 1, 2],
  ] as const)(
    '%s: credits by powertools-idempotency %i, by powertools-message-id %i',
    async (_name, copy, byEvent, byMessage) => {
      const stored = new Map<string, Item>();
      raw.on(PutItemCommand).callsFake((input: PutItemCommandInput) => {
        const id = input.Item?.id?.S ?? '';
        const old = stored.get(id);
        if (old?.status?.S === 'COMPLETED') throw existing(old, 'COMPLETED');
        if (input.Item) stored.set(id, input.Item);
        return {};
      });
      raw.on(UpdateItemCommand).callsFake((input: UpdateItemCommandInput) => {
        const id = input.Key?.id?.S ?? '';
        const old = stored.get(id);
        if (old)
          stored.set(id, { ...old, status: { S: 'COMPLETED' }, data: { M: { outcome: { S: 'applied' } } } });
        return {};
      });
      const body = messageBody();
      const first = sqsRecord(body);
      const again =
        copy === 'redelivery'
          ? sqsRecord(body, { receiveCount: 2, messageId: first.messageId })
          : sqsRecord(body);

      for (const record of [first, again]) {
        expect(await processBatch(sqsEvent(record), context, consumer())).toEqual({ batchItemFailures: [] });
      }

      expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(
        MODE === 'powertools-idempotency' ? byEvent : byMessage,
      );
    },
  );

  it('does not apply again a delivery whose idempotency record is COMPLETED, and counts the suppressed duplicate', async () => {
    const body = messageBody();
    const first = sqsRecord(body);
    await processBatch(sqsEvent(first), context, consumer());
    const [stored] = puts;
    if (!stored) throw new Error('no INPROGRESS record was written');
    raw
      .on(PutItemCommand)
      .rejects(existing(stored, 'COMPLETED', { data: { M: { outcome: { S: 'applied' } } } }));
    writes = [];

    const redelivery = sqsRecord(body, { receiveCount: 2, messageId: first.messageId });
    const result = await processBatch(sqsEvent(redelivery), context, consumer());

    expect(result).toEqual({ batchItemFailures: [] });
    expect(writes).toEqual([
      `counter ${counterKey(COUNTERS.deliveries)}`,
      `counter ${counterKey(COUNTERS.suppressedDuplicates)}`,
    ]);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1); // the first delivery's only
  });

  it('fails a redelivery while another invocation holds the record INPROGRESS (not expired): nothing applied', async () => {
    const body = messageBody();
    const first = sqsRecord(body);
    await processBatch(sqsEvent(first), context, consumer());
    const [stored] = puts;
    if (!stored) throw new Error('no INPROGRESS record was written');
    raw.on(PutItemCommand).rejects(existing(stored, 'INPROGRESS'));
    writes = [];

    const concurrent = sqsRecord(body, { messageId: first.messageId }); // e.g. a visibility overrun
    const result = await processBatch(sqsEvent(concurrent), context, consumer());

    // IdempotencyAlreadyInProgressError: SQS brings the message back after the visibility timeout.
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: concurrent.messageId }] });
    expect(writes).toEqual([`counter ${counterKey(COUNTERS.deliveries)}`]);
  });

  // powertools-message-id validates nothing: one SQS message id has one body.
  it.runIf(KEYED[MODE].validatesPayload)(
    'fails a reused event id with another amount (payload validation) and applies nothing',
    async () => {
      const body = messageBody({ amountCents: 100 });
      await processBatch(sqsEvent(sqsRecord(body)), context, consumer());
      const [stored] = puts;
      if (!stored) throw new Error('no INPROGRESS record was written');
      raw.on(PutItemCommand).rejects(existing(stored, 'COMPLETED'));
      writes = [];

      const reuse = sqsRecord({ ...body, amountCents: 999 });
      const result = await processBatch(sqsEvent(reuse), context, consumer());

      expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: reuse.messageId }] });
      expect(writes).toEqual([`counter ${counterKey(COUNTERS.deliveries)}`]);
    },
  );

  it('reports an invalid body as a failed item: no idempotency record, no credit; the others still apply', async () => {
    const bad = sqsRecord(JSON.stringify({ ...messageBody(), amountCents: 1.5 }));
    const good = sqsRecord(messageBody());

    const result = await processBatch(sqsEvent(bad, good), context, consumer());

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });
    expect(raw.commandCalls(PutItemCommand)).toHaveLength(1);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(raw.commandCalls(GetItemCommand)).toHaveLength(0);
  });

  it('reports a batch of invalid bodies as failed items, not as a thrown error', async () => {
    const records: SQSRecord[] = [sqsRecord('not json'), sqsRecord('{}')];

    const result = await processBatch(sqsEvent(...records), context, consumer());

    expect(result).toEqual({
      batchItemFailures: records.map((record) => ({ itemIdentifier: record.messageId })),
    });
    expect(writes).toEqual([]);
  });

  it('deletes the INPROGRESS record when the credit fails, so the redelivery can run it', async () => {
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ValidationError' }, { Code: 'None' }],
      }),
    );
    const record = sqsRecord(messageBody());

    const result = await processBatch(sqsEvent(record), context, consumer());

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(writes).toEqual([
      `counter ${counterKey(COUNTERS.deliveries)}`,
      'PutItem INPROGRESS',
      'DeleteItem',
    ]);
  });

  it('crashes after the credit is durable and before the record is COMPLETED', async () => {
    let atKill: string[] = [];
    const killed = consumer({ crashRate: 1, onKill: () => (atKill = [...writes]) });
    const body = messageBody();

    await expect(
      killed.untilKilled(processBatch(sqsEvent(sqsRecord(body)), context, killed)),
    ).rejects.toThrow(Killed);

    expect(killed.kills).toBe(1);
    // What a SIGKILL leaves behind: the credit, and an INPROGRESS record that only its in-progress
    // expiry releases.
    expect(atKill).toEqual([
      `counter ${counterKey(COUNTERS.deliveries)}`,
      'PutItem INPROGRESS',
      'TransactWriteItems',
      `counter ${counterKey(COUNTERS.crashes)}`,
      `counter ${crashKey(body.eventId, 1)}`,
    ]);
    expect(atKill).not.toContain('UpdateItem COMPLETED');
  });
});

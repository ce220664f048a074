import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ChangeMessageVisibilityBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError, RunNotFoundError } from '../../../functions/shared/errors.js';
import {
  parseDeadLetterQueueUrls,
  type VerifierDeps,
  verifyMode,
  verifyRun,
} from '../../../functions/verifier.js';

const DLQ = {
  'at-most-once': 'https://sqs.local/amo-dlq',
  'at-least-once': 'https://sqs.local/alo-dlq',
  'effectively-once': 'https://sqs.local/eo-dlq',
} as const;

type Item = Record<string, unknown>;

/** An in-memory ledger partition served through mocked Query pages of `pageSize` items. */
function serveLedger(ddb: ReturnType<typeof mockClient>, items: Item[], pageSize = 2): void {
  ddb.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const prefix = String(input.ExpressionAttributeValues?.[':prefix']);
    const matching = items
      .filter((item) => String(item.sk).startsWith(prefix))
      .sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1));
    const start = input.ExclusiveStartKey
      ? matching.findIndex((item) => item.sk === input.ExclusiveStartKey?.sk) + 1
      : 0;
    const page = matching.slice(start, start + pageSize);
    const last = page.at(-1);
    return {
      Items: page,
      ...(start + pageSize < matching.length && last ? { LastEvaluatedKey: { sk: last.sk } } : {}),
    };
  });
}

const application = (eventId: string, amountCents: number, delivery = ''): Item => ({
  sk: `APP#${eventId}${delivery}`,
  eventId,
  amountCents,
});

describe('verifier', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  const deps: VerifierDeps = {
    reader: { ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})), tableName: 'ledger-test' },
    sqs: new SQSClient({}),
    deadLetterQueueUrls: DLQ,
  };

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    ddb.on(GetCommand).resolves({ Item: { produced: 5, expectedCents: 500 } });
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [] });
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({});
  });

  it('counts applied once, duplicated, extra applications, lost and drift across query pages', async () => {
    serveLedger(ddb, [
      application('a', 100),
      application('b', 100, '#1#m1#r1'),
      application('b', 100, '#2#m1#r2'),
      application('b', 100, '#3#m1#r3'),
      application('c', 100),
      application('d', 100, '#1#m2#r1'),
      application('d', 100, '#2#m2#r2'),
      { sk: 'BAL#acct-1', balanceCents: 600 },
      { sk: 'BAL#acct-2', balanceCents: 100 },
      { sk: 'STAT#deliveries', count: 9 },
      { sk: 'STAT#crashes', count: 3 },
    ]);

    const outcome = await verifyMode(deps, 'run-1', 'at-least-once');

    expect(outcome).toMatchObject({
      produced: 5,
      deliveries: 9,
      appliedOnce: 2,
      duplicated: 2,
      extraApplications: 3,
      deadLettered: 0,
      lost: 1,
      expectedCents: 500,
      actualCents: 700,
      driftCents: 200,
      ledgerCents: 700,
      consistent: true,
      crashes: 3,
    });
  });

  it('counts the run’s dead-lettered messages, not other runs’, and releases every one it received', async () => {
    serveLedger(ddb, [application('a', 100), { sk: 'BAL#x', balanceCents: 100 }]);
    const dlqMessage = (id: string, runId: string, eventId: string) => ({
      MessageId: id,
      ReceiptHandle: `rh-${id}`,
      Body: JSON.stringify({ eventId, runId, accountId: 'x', amountCents: 100 }),
      MessageAttributes: { runId: { DataType: 'String', StringValue: runId } },
    });
    sqs
      .on(ReceiveMessageCommand, { QueueUrl: DLQ['at-least-once'] })
      .resolvesOnce({ Messages: [dlqMessage('m1', 'run-1', 'b'), dlqMessage('m2', 'other-run', 'z')] })
      .resolvesOnce({ Messages: [dlqMessage('m3', 'run-1', 'a')] })
      .resolves({ Messages: [] });

    const outcome = await verifyMode(deps, 'run-1', 'at-least-once');

    expect(outcome.deadLettered).toBe(2);
    expect(outcome.appliedAndDeadLettered).toBe(1);
    // 5 produced − 1 applied (a) − 1 dead-lettered and never applied (b) = 3 lost.
    expect(outcome.lost).toBe(3);
    const released = sqs
      .commandCalls(ChangeMessageVisibilityBatchCommand)
      .flatMap((call) => call.args[0].input.Entries ?? []);
    expect(released.map((entry) => [entry.ReceiptHandle, entry.VisibilityTimeout])).toEqual([
      ['rh-m1', 0],
      ['rh-m2', 0],
      ['rh-m3', 0],
    ]);
  });

  it('ends the DLQ sweep when receives only return messages it has already seen', async () => {
    serveLedger(ddb, [application('a', 100), { sk: 'BAL#x', balanceCents: 100 }]);
    const poison = {
      MessageId: 'p1',
      ReceiptHandle: 'rh-p1',
      Body: 'not json',
      MessageAttributes: { runId: { DataType: 'String', StringValue: 'run-1' } },
    };
    // A queue that never answers empty (e.g. messages reappearing during a long sweep).
    sqs.on(ReceiveMessageCommand, { QueueUrl: DLQ['at-most-once'] }).resolves({ Messages: [poison] });

    const outcome = await verifyMode(deps, 'run-1', 'at-most-once');

    // One receive brings it, three in a row bring nothing new: wrapped around.
    expect(sqs.commandCalls(ReceiveMessageCommand, { QueueUrl: DLQ['at-most-once'] })).toHaveLength(4);
    // Released once, with its latest receipt handle.
    expect(
      sqs
        .commandCalls(ChangeMessageVisibilityBatchCommand)
        .flatMap((call) => call.args[0].input.Entries ?? []),
    ).toHaveLength(1);
    // A poison body names no event: reported apart, never counted as a produced event.
    expect(outcome).toMatchObject({ deadLettered: 0, deadLetteredUnreadable: 1 });
  });

  it('flags a ledger that does not add up to the balances as inconsistent', async () => {
    serveLedger(ddb, [application('a', 100), { sk: 'BAL#x', balanceCents: 90 }]);

    const outcome = await verifyMode(deps, 'run-1', 'effectively-once');

    expect(outcome.consistent).toBe(false);
    expect(outcome.ledgerCents).toBe(100);
    expect(outcome.actualCents).toBe(90);
  });

  it('reads with Query only, never Scan, and with consistent reads', async () => {
    serveLedger(ddb, [application('a', 100)]);

    await verifyRun(deps, { runId: 'run-1' });

    const queries = ddb.commandCalls(QueryCommand);
    expect(queries.length).toBeGreaterThan(0);
    expect(
      ddb.calls().every((call) => call.args[0] instanceof QueryCommand || call.args[0] instanceof GetCommand),
    ).toBe(true);
    expect(queries.every((call) => call.args[0].input.ConsistentRead === true)).toBe(true);
  });

  it('returns one outcome per mode of the topology', async () => {
    serveLedger(ddb, []);
    const result = await verifyRun(deps, { runId: 'run-1' });
    expect(Object.keys(result.modes)).toEqual(['at-most-once', 'at-least-once', 'effectively-once']);
  });

  it('verifies only the requested modes', async () => {
    serveLedger(ddb, [application('a', 100), { sk: 'BAL#x', balanceCents: 100 }]);
    const result = await verifyRun(deps, { runId: 'run-1', modes: ['effectively-once'] });
    expect(Object.keys(result.modes)).toEqual(['effectively-once']);
    expect(ddb.commandCalls(GetCommand).map((call) => call.args[0].input.Key?.pk)).toEqual([
      'RUN#run-1#MODE#effectively-once',
    ]);
    await expect(verifyRun(deps, { runId: 'run-1', modes: ['exactly-once'] })).rejects.toThrow(
      InvalidInputError,
    );
  });

  it('rejects input without a valid runId, and a run that was never produced', async () => {
    await expect(verifyRun(deps, {})).rejects.toThrow(InvalidInputError);
    await expect(verifyRun(deps, { runId: 'a#b' })).rejects.toThrow(/runId/);
    ddb.on(GetCommand).resolves({});
    serveLedger(ddb, []);
    await expect(verifyRun(deps, { runId: 'never' })).rejects.toThrow(RunNotFoundError);
  });

  it('requires a dead-letter queue URL for every mode', () => {
    expect(() => parseDeadLetterQueueUrls(JSON.stringify({ 'at-most-once': DLQ['at-most-once'] }))).toThrow(
      /no URL for: at-least-once, effectively-once/,
    );
    expect(parseDeadLetterQueueUrls(JSON.stringify(DLQ))).toEqual(DLQ);
  });
});

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ChangeMessageVisibilityBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError, RunNotFoundError } from '../../../functions/shared/errors.js';
import { joinByEventId } from '../../../functions/shared/outcome.js';
import {
  parseDeadLetterQueueUrls,
  type VerifierDeps,
  verifyMode,
  verifyRun,
} from '../../../functions/verifier.js';
import { MODE_NAMES } from '../../../lib/topology.js';

const DLQ = {
  'at-most-once': 'https://sqs.local/amo-dlq',
  'at-least-once': 'https://sqs.local/alo-dlq',
  'effectively-once': 'https://sqs.local/eo-dlq',
  'powertools-idempotency': 'https://sqs.local/pti-dlq',
} as const;

type Item = Record<string, unknown>;

/** An in-memory ledger served through mocked Query pages of `pageSize` items, per partition and prefix. */
function serveLedger(ddb: ReturnType<typeof mockClient>, items: Item[], pageSize = 2): void {
  ddb.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const pk = String(input.ExpressionAttributeValues?.[':pk']);
    const prefix = String(input.ExpressionAttributeValues?.[':prefix']);
    const matching = items
      .filter((item) => item.pk === pk && String(item.sk).startsWith(prefix))
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

const RUN = 'run-1';
const ALO = `RUN#${RUN}#MODE#at-least-once`;
const MANIFEST = `RUN#${RUN}#MANIFEST`;

/** The manifest of events a..e (100 cents each, account x) plus any extra items. */
function manifest(
  events: Item[] = ['a', 'b', 'c', 'd', 'e'].map((eventId) => ({ eventId })),
  modes: string[] = [...MODE_NAMES],
): Item[] {
  const full: Item[] = events.map((event) => ({ accountId: 'x', amountCents: 100, ...event }));
  return [
    ...full.map((event) => ({ pk: MANIFEST, sk: `EVT#${event.eventId}`, ...event })),
    {
      pk: MANIFEST,
      sk: 'SUMMARY',
      produced: full.length,
      poison: full.filter((event) => event.poison !== undefined).length,
      producerDuplicates: 0,
      expectedCents: full.filter((event) => event.poison === undefined).length * 100,
      modes,
    },
  ];
}

const application = (
  eventId: string,
  amountCents: number,
  delivery = '',
  extra: Item = {},
  pk: string = ALO,
): Item => ({
  pk,
  sk: `APP#${eventId}${delivery}`,
  eventId,
  accountId: 'x',
  amountCents,
  applications: 1,
  ...extra,
});

const balance = (cents: number, pk: string = ALO): Item => ({ pk, sk: 'BAL#x', balanceCents: cents });

const dlqMessage = (id: string, runId: string, eventId: string, body?: string) => ({
  MessageId: id,
  ReceiptHandle: `rh-${id}`,
  Body: body ?? JSON.stringify({ eventId, runId, accountId: 'x', amountCents: 100 }),
  MessageAttributes: {
    runId: { DataType: 'String', StringValue: runId },
    eventId: { DataType: 'String', StringValue: eventId },
  },
});

describe('verifier', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  const deps: VerifierDeps = {
    reader: { ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})), tableName: 'ledger-test' },
    sqs: new SQSClient({}),
    deadLetterQueueUrls: DLQ,
  };
  const verifyAlo = async () =>
    (await verifyRun(deps, { runId: RUN, modes: ['at-least-once'] })).modes['at-least-once'];

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [] });
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({});
  });

  it('counts applied once, duplicated, extra applications, lost and drift by event id across query pages', async () => {
    serveLedger(ddb, [
      ...manifest(),
      application('a', 100),
      application('b', 100, '#1#m1#r1'),
      application('b', 100, '#2#m1#r2'),
      application('b', 100, '#3#m1#r3'),
      application('c', 100),
      application('d', 100, '#1#m2#r1'),
      application('d', 100, '#2#m2#r2'),
      balance(700),
      { pk: ALO, sk: 'STAT#deliveries', count: 9 },
      { pk: ALO, sk: 'STAT#crashes', count: 3 },
      { pk: ALO, sk: 'STAT#retriedCancellations', count: 4 },
    ]);

    expect(await verifyAlo()).toMatchObject({
      produced: 5,
      deliveries: 9,
      appliedOnce: 2,
      duplicated: 2,
      extraApplications: 3,
      deadLettered: 0,
      lost: 1,
      unexpected: 0,
      expectedCents: 500,
      actualCents: 700,
      driftCents: 200,
      ledgerCents: 700,
      consistent: true,
      crashes: 3,
      retriedCancellations: 4,
    });
  });

  it('catches an application of an event the producer never sent, which a count would net against a lost one', async () => {
    // a..e produced; e never applied, z applied although nobody sent it: counts alone would say 5 − 5 = 0 lost.
    serveLedger(ddb, [
      ...manifest(),
      ...['a', 'b', 'c', 'd', 'z'].map((id) => application(id, 100)),
      balance(500),
    ]);

    expect(await verifyAlo()).toMatchObject({ appliedOnce: 4, lost: 1, unexpected: 1, driftCents: 0 });
  });

  it('counts a processed marker that was applied twice as a duplicate (a broken guard), not only as drift', async () => {
    const eo = `RUN#${RUN}#MODE#effectively-once`;
    serveLedger(ddb, [
      ...manifest([{ eventId: 'a' }, { eventId: 'b' }]),
      application('a', 100, '', { applications: 2 }, eo),
      application('b', 100, '', {}, eo),
      balance(300, eo),
    ]);

    const outcome = await verifyMode(deps, RUN, 'effectively-once', {
      produced: 2,
      poison: 0,
      producerDuplicates: 0,
      expectedCents: 200,
      modes: ['effectively-once'],
    });

    expect(outcome).toMatchObject({ appliedOnce: 1, duplicated: 1, extraApplications: 1, consistent: true });
  });

  it('counts the run’s dead-lettered messages by id, not other runs’, and releases every one it received', async () => {
    serveLedger(ddb, [...manifest(), application('a', 100), balance(100)]);
    sqs
      .on(ReceiveMessageCommand, { QueueUrl: DLQ['at-least-once'] })
      .resolvesOnce({ Messages: [dlqMessage('m1', RUN, 'b'), dlqMessage('m2', 'other-run', 'z')] })
      .resolvesOnce({ Messages: [dlqMessage('m3', RUN, 'a')] })
      .resolves({ Messages: [] });

    const outcome = await verifyAlo();

    expect(outcome?.deadLettered).toBe(1);
    expect(outcome?.appliedAndDeadLettered).toBe(1);
    // a applied, b dead-lettered; c, d, e neither.
    expect(outcome?.lost).toBe(3);
    const released = sqs
      .commandCalls(ChangeMessageVisibilityBatchCommand)
      .flatMap((call) => call.args[0].input.Entries ?? []);
    expect(released.map((entry) => [entry.ReceiptHandle, entry.VisibilityTimeout])).toEqual([
      ['rh-m1', 0],
      ['rh-m2', 0],
      ['rh-m3', 0],
    ]);
  });

  it('counts dead-lettered poison as dead-lettered, poison nobody dead-lettered as lost, and applied poison as unexpected', async () => {
    serveLedger(ddb, [
      ...manifest([
        { eventId: 'a' },
        { eventId: 'p1', poison: 'malformed-json' },
        { eventId: 'p2', poison: 'negative-amount' },
        { eventId: 'p3', poison: 'zero-amount' },
      ]),
      application('a', 100),
      application('p3', 0),
      balance(100),
    ]);
    sqs
      .on(ReceiveMessageCommand, { QueueUrl: DLQ['at-least-once'] })
      .resolvesOnce({ Messages: [dlqMessage('m1', RUN, 'p1', '{"eventId":"p1", broken')] })
      .resolves({ Messages: [] });

    expect(await verifyAlo()).toMatchObject({
      produced: 4,
      poison: 3,
      appliedOnce: 1,
      deadLettered: 1,
      lost: 1,
      unexpected: 1,
      expectedCents: 100,
    });
  });

  it('reports a dead-lettered reuse of an event id with another amount as conflicting reuse, not as the event’s fate', async () => {
    serveLedger(ddb, [...manifest([{ eventId: 'a' }]), application('a', 100), balance(100)]);
    const reuse = JSON.stringify({ eventId: 'a', runId: RUN, accountId: 'x', amountCents: 999 });
    sqs
      .on(ReceiveMessageCommand, { QueueUrl: DLQ['at-least-once'] })
      .resolvesOnce({ Messages: [dlqMessage('m1', RUN, 'a', reuse)] })
      .resolves({ Messages: [] });

    expect(await verifyAlo()).toMatchObject({
      appliedOnce: 1,
      conflictingReuse: 1,
      appliedAndDeadLettered: 0,
      lost: 0,
    });
  });

  it('flags an application whose amount differs from the manifest', async () => {
    serveLedger(ddb, [...manifest([{ eventId: 'a' }]), application('a', 250), balance(250)]);
    expect(await verifyAlo()).toMatchObject({ appliedOnce: 1, payloadMismatches: 1, driftCents: 150 });
  });

  it('ends the DLQ sweep when receives only return messages it has already seen', async () => {
    serveLedger(ddb, [...manifest(), application('a', 100), balance(100)]);
    const poison = {
      MessageId: 'p1',
      ReceiptHandle: 'rh-p1',
      Body: 'not json',
      MessageAttributes: { runId: { DataType: 'String', StringValue: RUN } },
    };
    // A queue that never answers empty (e.g. messages reappearing during a long sweep).
    sqs.on(ReceiveMessageCommand, { QueueUrl: DLQ['at-least-once'] }).resolves({ Messages: [poison] });

    const outcome = await verifyAlo();

    // One receive brings it, three in a row bring nothing new: wrapped around.
    expect(sqs.commandCalls(ReceiveMessageCommand, { QueueUrl: DLQ['at-least-once'] })).toHaveLength(4);
    expect(
      sqs
        .commandCalls(ChangeMessageVisibilityBatchCommand)
        .flatMap((call) => call.args[0].input.Entries ?? []),
    ).toHaveLength(1);
    // A body that names no event (and no event attribute): reported apart.
    expect(outcome).toMatchObject({ deadLettered: 0, deadLetteredUnreadable: 1 });
  });

  it('flags a ledger that does not add up to the balances as inconsistent', async () => {
    serveLedger(ddb, [...manifest(), application('a', 100), balance(90)]);

    const outcome = await verifyAlo();

    expect(outcome?.consistent).toBe(false);
    expect(outcome?.ledgerCents).toBe(100);
    expect(outcome?.actualCents).toBe(90);
  });

  it('reads with Query only, never Scan, and with consistent reads', async () => {
    serveLedger(ddb, [...manifest(), application('a', 100)]);

    await verifyRun(deps, { runId: RUN });

    const queries = ddb.commandCalls(QueryCommand);
    expect(queries.length).toBeGreaterThan(0);
    expect(ddb.calls().every((call) => call.args[0] instanceof QueryCommand)).toBe(true);
    expect(queries.every((call) => call.args[0].input.ConsistentRead === true)).toBe(true);
  });

  it('returns one outcome per mode of the topology', async () => {
    serveLedger(ddb, manifest());
    const result = await verifyRun(deps, { runId: RUN });
    expect(Object.keys(result.modes)).toEqual(MODE_NAMES);
  });

  it('verifies only the requested modes, each once, so one DLQ is never swept twice at a time', async () => {
    serveLedger(ddb, [...manifest(), application('a', 100), balance(100)]);
    const result = await verifyRun(deps, {
      runId: RUN,
      modes: ['effectively-once', 'at-least-once', 'effectively-once'],
    });
    expect(Object.keys(result.modes)).toEqual(['at-least-once', 'effectively-once']);
    const sweptQueues = sqs.commandCalls(ReceiveMessageCommand).map((call) => call.args[0].input.QueueUrl);
    // Empty DLQs: one sweep is the same few receives per queue; a second sweep would double them.
    const receivesOf = (url: string) => sweptQueues.filter((swept) => swept === url).length;
    expect(receivesOf(DLQ['effectively-once'])).toBe(receivesOf(DLQ['at-least-once']));
    await expect(verifyRun(deps, { runId: RUN, modes: ['exactly-once'] })).rejects.toThrow(InvalidInputError);
  });

  it('rejects input without a valid runId, a run that was never produced, and a mode it was not produced to', async () => {
    await expect(verifyRun(deps, {})).rejects.toThrow(InvalidInputError);
    await expect(verifyRun(deps, { runId: 'a#b' })).rejects.toThrow(/runId/);
    serveLedger(ddb, []);
    await expect(verifyRun(deps, { runId: 'never' })).rejects.toThrow(RunNotFoundError);
    serveLedger(ddb, manifest(undefined, ['at-most-once']));
    await expect(verifyRun(deps, { runId: RUN, modes: ['at-least-once'] })).rejects.toThrow(
      /not produced to at-least-once/,
    );
  });

  it('requires a dead-letter queue URL for every mode', () => {
    expect(() => parseDeadLetterQueueUrls(JSON.stringify({ 'at-most-once': DLQ['at-most-once'] }))).toThrow(
      /no URL for: at-least-once, effectively-once/,
    );
    expect(parseDeadLetterQueueUrls(JSON.stringify(DLQ))).toEqual(DLQ);
  });
});

describe('joinByEventId', () => {
  async function* stream<T>(items: T[]): AsyncGenerator<T> {
    yield* items;
  }
  const event = (eventId: string) => ({ eventId, accountId: 'x', amountCents: 1 });

  it('refuses streams out of event-id order instead of producing plausible numbers', async () => {
    await expect(joinByEventId(stream([event('b'), event('a')]), stream([]), [])).rejects.toThrow(
      /out of order/,
    );
  });

  it('orders ids the way DynamoDB orders their sort keys (a before a-b before a0)', async () => {
    const counts = await joinByEventId(stream([event('a'), event('a-b'), event('a0')]), stream([]), []);
    expect(counts.lost).toBe(3);
  });
});

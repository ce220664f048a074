import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError, RunNotFoundError } from '../../../contract/errors.js';
import { appliedOnBalanceAttribute, appliedOnBalanceEntry } from '../../../contract/ledger-keys.js';
import { fifoIdsOf, payloadHash } from '../../../contract/message.js';
import { evidenceOf, MODE_NAMES, type Mode } from '../../../contract/topology.js';
import { buildTimeline, MAX_DETAILED_EVENTS, MAX_TIMELINE_BUCKETS } from '../../../verifier/event-details.js';
import { joinByEventId } from '../../../verifier/event-id-join.js';
import type { ManifestEvent } from '../../../verifier/manifest.js';
import { type VerifierDeps, verifyMode } from '../../../verifier/mode-verification.js';
import { parseDeadLetterQueueUrls, sweepWaitOf, verifyRun } from '../../../verifier/verifier.js';

const DLQ = {
  'at-most-once': 'https://sqs.local/amo-dlq',
  'at-least-once': 'https://sqs.local/alo-dlq',
  'effectively-once': 'https://sqs.local/eo-dlq',
  'powertools-idempotency': 'https://sqs.local/pti-dlq',
  'powertools-message-id': 'https://sqs.local/ptm-dlq',
  'entry-upsert': 'https://sqs.local/eu-dlq',
  'state-upsert': 'https://sqs.local/su-dlq',
  'fifo-versioned': 'https://sqs.local/fv-dlq.fifo',
  'charge-no-key': 'https://sqs.local/cnk-dlq',
  'charge-with-key': 'https://sqs.local/cwk-dlq',
  'marker-then-credit': 'https://sqs.local/mtc-dlq',
  'credit-then-marker': 'https://sqs.local/ctm-dlq',
} as const;

type Item = Record<string, unknown>;

/**
 * The one-write modes (evidence: 'balance') keep no application items: their applications are
 * lists on the balance items. Folds a fixture's application items into them, so one fixture
 * describes every mode.
 */
function asStored(items: Item[]): Item[] {
  const balancePartitions = new Map<unknown, boolean>();
  const onBalance = (pk: unknown): boolean => {
    let known = balancePartitions.get(pk);
    if (known === undefined) {
      known = MODE_NAMES.some(
        (mode) => evidenceOf(mode) === 'balance' && String(pk).endsWith(`#MODE#${mode}`),
      );
      balancePartitions.set(pk, known);
    }
    return known;
  };
  const balances = new Map<string, Item>();
  const fixtureBalances = new Map(
    items
      .filter((item) => String(item.sk).startsWith('BAL#'))
      .map((item) => [`${String(item.pk)}|${String(item.sk)}`, item]),
  );
  const balanceOf = (pk: unknown, accountId: string): Item => {
    const key = `${String(pk)}|BAL#${accountId}`;
    const existing = balances.get(key) ??
      fixtureBalances.get(key) ?? {
        pk,
        sk: `BAL#${accountId}`,
        balanceCents: 0,
      };
    const copy = { ...existing };
    balances.set(key, copy);
    return copy;
  };
  for (const item of items) {
    if (!onBalance(item.pk) || !String(item.sk).startsWith('APP#')) continue;
    const stored = balanceOf(item.pk, String(item.accountId));
    const name = appliedOnBalanceAttribute(String(item.eventId));
    const entry = appliedOnBalanceEntry({
      receiveCount: Number(item.receiveCount ?? 1),
      appliedAtMs: item.appliedAt === undefined ? 0 : Date.parse(String(item.appliedAt)),
      amountCents: Number(item.amountCents),
    });
    stored[name] = [
      ...((stored[name] as string[] | undefined) ?? []),
      ...Array(Number(item.applications)).fill(entry),
    ];
  }
  const folded = items.filter(
    (item) =>
      !(onBalance(item.pk) && (String(item.sk).startsWith('APP#') || String(item.sk).startsWith('BAL#'))),
  );
  return [...folded, ...balances.values()];
}

/** An in-memory ledger served through mocked Query pages of `pageSize` items, per partition and prefix. */
function serveLedger(ddb: ReturnType<typeof mockClient>, fixture: Item[], pageSize = 2): void {
  const items = asStored(fixture);
  // Each key's items sorted once, with each item's position: a run of 20,000 events × every mode
  // is served in pages of 1,000, and filtering and sorting every item for every page took seconds.
  const byQuery = new Map<string, { sorted: Item[]; positionOf: Map<unknown, number> }>();
  const matchingOf = (pk: string, prefix: string) => {
    const key = `${pk}\n${prefix}`;
    let matching = byQuery.get(key);
    if (!matching) {
      const sorted = items
        .filter((item) => item.pk === pk && String(item.sk).startsWith(prefix))
        .sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1));
      matching = { sorted, positionOf: new Map(sorted.map((item, index) => [item.sk, index])) };
      byQuery.set(key, matching);
    }
    return matching;
  };
  ddb.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const { sorted, positionOf } = matchingOf(
      String(input.ExpressionAttributeValues?.[':pk']),
      String(input.ExpressionAttributeValues?.[':prefix']),
    );
    const start = input.ExclusiveStartKey ? (positionOf.get(input.ExclusiveStartKey.sk) ?? -1) + 1 : 0;
    const page = sorted.slice(start, start + pageSize);
    const last = page.at(-1);
    return {
      Items: page,
      ...(start + pageSize < sorted.length && last ? { LastEvaluatedKey: { sk: last.sk } } : {}),
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
    // The provider's ledger: no charges (the charge modes' own tests: charge-outcome.test.ts).
    charges: async function* () {},
  };
  const verifyAlo = async () =>
    (await verifyRun(deps, { runId: RUN, modes: ['at-least-once'] })).modes['at-least-once'];

  beforeEach(() => {
    ddb.reset();
    sqs.reset();
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [] });
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({});
  });

  describe('a FIFO mode whose DLQ holds more of an account than its sweep can see', () => {
    const FV = `RUN#${RUN}#MODE#fifo-versioned`;
    // Account x: a (seq 1) applied; b, c and d (seq 2–4) dead-lettered in order, by an outage (no
    // gap, nothing recorded by the consumer). A FIFO DLQ hides a group's later messages while its
    // first ones are in flight: the sweep sees b, at the head of group x, and not c or d.
    const items = [
      ...manifest(['a', 'b', 'c', 'd'].map((eventId, index) => ({ eventId, seq: index + 1 }))),
      application('a', 100, '', {}, FV),
      { pk: FV, sk: 'BAL#x', balanceCents: 100, version: 1 },
    ];
    const inGroup = (message: ReturnType<typeof dlqMessage>, account: string, runId = RUN) => ({
      ...message,
      Attributes: { MessageGroupId: fifoIdsOf(runId, account, message.MessageId).MessageGroupId },
    });
    const verifyFifo = async () =>
      (await verifyRun(deps, { runId: RUN, modes: ['fifo-versioned'] })).modes['fifo-versioned'];

    beforeEach(() => {
      serveLedger(ddb, items);
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({ Messages: [inGroup(dlqMessage('m-b', RUN, 'b'), 'x')] })
        .resolves({ Messages: [] });
    });

    it('counts the events behind the head of their group as dead-lettered, unseen, when the DLQ holds that many more messages', async () => {
      sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '3' } });

      expect(await verifyFifo()).toMatchObject({
        lost: 0,
        deadLettered: 3,
        deadLetteredUnseen: 2,
        deadLetteredCents: 300,
        driftCents: -300,
      });
      // The sweep asks for each message's group, which is how it knows whose head it saw.
      expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.MessageSystemAttributeNames).toEqual([
        'MessageGroupId',
      ]);
    });

    it('counts as lost what the DLQ cannot hold: an inference never hides a loss', async () => {
      // The DLQ holds the one message seen and one more: one of c and d is not there.
      sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '2' } });

      expect(await verifyFifo()).toMatchObject({ lost: 1, deadLettered: 2, deadLetteredUnseen: 1 });
    });

    it("infers nothing from another run's group, even of the same account: the groups carry the run", async () => {
      sqs.reset();
      sqs.on(ChangeMessageVisibilityBatchCommand).resolves({});
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({ Messages: [inGroup(dlqMessage('m-o', 'another-run', 'o'), 'x', 'another-run')] })
        .resolves({ Messages: [] });
      sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '10' } });

      expect(await verifyFifo()).toMatchObject({ lost: 3, deadLettered: 0, deadLetteredUnseen: 0 });
    });

    it('infers nothing for a standard mode, and asks SQS for no count', async () => {
      serveLedger(ddb, manifest());
      expect(await verifyAlo()).not.toHaveProperty('deadLetteredUnseen');
      expect(sqs.commandCalls(GetQueueAttributesCommand)).toHaveLength(0);
    });
  });

  it('sweeps each DLQ with a 1 s long poll unless told otherwise (an emulator: 0)', async () => {
    serveLedger(ddb, manifest());
    await verifyAlo();
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.WaitTimeSeconds).toBe(1);
    sqs.resetHistory();
    await verifyRun({ ...deps, ...sweepWaitOf('0') }, { runId: RUN, modes: ['at-least-once'] });
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.WaitTimeSeconds).toBe(0);
  });

  it.each(['', '-1', '1.5', '21', 'soon'])(
    'refuses DLQ_SWEEP_WAIT_SECONDS=%o with a clear message',
    (raw) => {
      expect(() => sweepWaitOf(raw)).toThrow(
        /DLQ_SWEEP_WAIT_SECONDS=.* must be a whole number of seconds from 0 to 20/,
      );
    },
  );

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
    const reuse = JSON.stringify({
      eventId: 'a',
      runId: RUN,
      accountId: 'x',
      amountCents: 999,
      seq: 1,
      createdAt: new Date().toISOString(),
    });
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

  describe('a state mode (state-upsert: the balance is the newest state, not a sum)', () => {
    const SU = `RUN#${RUN}#MODE#state-upsert`;
    /** Events a..e of account x, 100 cents each: event n's state is 100 × n. */
    const record = (eventId: string, seq: number) =>
      application(eventId, 100, '', { seq, balanceAfterCents: 100 * seq }, SU);
    const verifySu = async () =>
      (await verifyRun(deps, { runId: RUN, modes: ['state-upsert'] })).modes['state-upsert'];

    it('checks the balances against the newest recorded state per account, and reports superseded', async () => {
      serveLedger(ddb, [
        ...manifest(),
        // Recorded out of key order on purpose: the newest state is the highest seq, not the last key.
        record('a', 1),
        record('b', 2),
        record('c', 5),
        record('d', 3),
        record('e', 4),
        balance(500, SU),
        { pk: SU, sk: 'STAT#superseded', count: 2 },
      ]);

      expect(await verifySu()).toMatchObject({
        appliedOnce: 5,
        duplicated: 0,
        lost: 0,
        expectedCents: 500,
        actualCents: 500,
        driftCents: 0,
        ledgerCents: 500,
        consistent: true,
        superseded: 2,
      });
    });

    it('flags a balance no record attests as inconsistent, and a missing last state as drift', async () => {
      serveLedger(ddb, [...manifest(), record('a', 1), record('b', 2), record('c', 3), balance(500, SU)]);

      expect(await verifySu()).toMatchObject({ ledgerCents: 300, actualCents: 500, consistent: false });

      ddb.reset();
      serveLedger(ddb, [...manifest(), record('a', 1), record('b', 2), record('c', 3), balance(300, SU)]);
      expect(await verifySu()).toMatchObject({ lost: 2, consistent: true, driftCents: -200, superseded: 0 });
    });

    it('leaves superseded out of the other modes', async () => {
      serveLedger(ddb, [...manifest(), application('a', 100), balance(100)]);

      expect(await verifyAlo()).not.toHaveProperty('superseded');
    });
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

  it("takes the DLQs of the modes the stack deploys: any of the topology's, at least one", () => {
    expect(parseDeadLetterQueueUrls(JSON.stringify(DLQ))).toEqual(DLQ);
    const two = { 'at-most-once': DLQ['at-most-once'], 'fifo-versioned': DLQ['fifo-versioned'] };
    expect(parseDeadLetterQueueUrls(JSON.stringify(two))).toEqual(two);
    expect(() => parseDeadLetterQueueUrls(JSON.stringify({ 'exactly-once': DLQ['at-most-once'] }))).toThrow(
      'DEAD_LETTER_QUEUE_URLS names modes the topology lacks: exactly-once',
    );
    expect(() => parseDeadLetterQueueUrls('{}')).toThrow(/names no mode/);
  });

  it('verifies the deployed modes only: all of them unasked, and refuses one the stack lacks', async () => {
    serveLedger(ddb, manifest());
    const deployed = { ...deps, deadLetterQueueUrls: { 'effectively-once': DLQ['effectively-once'] } };
    expect(Object.keys((await verifyRun(deployed, { runId: RUN })).modes)).toEqual(['effectively-once']);
    await expect(
      verifyRun(deployed, { runId: RUN, modes: ['effectively-once', 'at-least-once'] }),
    ).rejects.toThrow(
      'this stack does not deploy at-least-once (it deploys effectively-once): redeploy it with those modes in -c modes=… (docs/deploying.md)',
    );
  });
  describe('per-event detail (events: true)', () => {
    const T = Date.UTC(2026, 0, 1);
    const at = (ms: number) => new Date(T + ms).toISOString();
    const applied = (eventId: string, receiveCount: number, ms: number, extra: Item = {}, pk = ALO) =>
      application(
        eventId,
        100,
        `#${receiveCount}#m-${eventId}#r${receiveCount}`,
        {
          receiveCount,
          appliedAt: at(ms),
          ...extra,
        },
        pk,
      );
    const crash = (key: string, receiveCount: number, ms: number, crashes = 1, pk = ALO): Item => ({
      pk,
      sk: `CRASH#${key}#${receiveCount}`,
      key,
      receiveCount,
      where: 'after applying the message, before the batch is acknowledged',
      crashedAt: at(ms),
      crashes,
    });
    const verifyAloInDetail = () => verifyRun(deps, { runId: RUN, modes: ['at-least-once'], events: true });

    /** One event in each state, in id order: o d a x l p q u, plus z (applied) and zz (dead-lettered) nobody sent. */
    function everyState(): void {
      serveLedger(ddb, [
        ...manifest([
          { eventId: 'e1-o' },
          { eventId: 'e2-d' },
          { eventId: 'e3-a' },
          { eventId: 'e4-x' },
          { eventId: 'e5-l' },
          { eventId: 'e6-p', poison: 'malformed-json' },
          { eventId: 'e7-q', poison: 'missing-field' },
          { eventId: 'e8-u', poison: 'unknown-field' },
        ]),
        applied('e1-o', 1, 100),
        applied('e2-d', 1, 200),
        applied('e2-d', 2, 1200),
        applied('e2-d', 3, 2500),
        applied('e3-a', 1, 300),
        applied('e8-u', 1, 400),
        applied('z', 1, 500),
        balance(700),
        { pk: ALO, sk: 'STAT#crashes', count: 6 },
        crash('e2-d', 1, 150),
        crash('e2-d', 2, 1150),
        crash('e2-d', 10, 2450),
        // A re-sent copy crashed at the same receive count: one item, two crashes.
        crash('e5-l', 1, 600, 2),
        // An unparsable body, keyed by its message id: no event to show it on.
        crash('msg-xyz', 1, 2000),
      ]);
      sqs
        .on(ReceiveMessageCommand, { QueueUrl: DLQ['at-least-once'] })
        .resolvesOnce({
          Messages: [
            dlqMessage('m1', RUN, 'e3-a'),
            dlqMessage('m2', RUN, 'e4-x'),
            dlqMessage('m3', RUN, 'e6-p', '{"eventId":"e6-p", broken'),
            dlqMessage('m4', RUN, 'zz'),
          ],
        })
        .resolves({ Messages: [] });
    }

    it('gives every manifest event its state, applications, receive counts and crashes, aligned with the manifest', async () => {
      everyState();

      const result = await verifyAloInDetail();

      expect(result.manifest).toEqual({
        eventIds: ['e1-o', 'e2-d', 'e3-a', 'e4-x', 'e5-l', 'e6-p', 'e7-q', 'e8-u'],
        accountIds: Array(8).fill('x'),
        // The fixture's manifest has no seq (as one written before seq existed).
        seqs: Array(8).fill(null),
        amountCents: Array(8).fill(100),
        poison: [null, null, null, null, null, 'malformed-json', 'missing-field', 'unknown-field'],
      });
      const events = result.modes['at-least-once']?.events;
      expect(events).toMatchObject({
        states: 'odaxlpqu',
        applications: [1, 3, 1, 0, 0, 0, 0, 1],
        receiveCounts: ['1', '1,2,3', '1', '', '', '', '', '1'],
        // In receive-count order, not key order ("10" sorts before "2" in a key).
        crashes: ['', '1,2,10', '', '', '1,1', '', '', ''],
        unattributedCrashes: 1,
        unexpectedEventIds: ['z', 'zz'],
      });
    });

    it('returns the same counts as without detail, and states that add up to them', async () => {
      everyState();
      const plain = await verifyRun(deps, { runId: RUN, modes: ['at-least-once'] });
      // The DLQ again as it was: the first verification's receives used up the mocked messages.
      sqs.reset();
      sqs.on(ChangeMessageVisibilityBatchCommand).resolves({});
      everyState();
      const detailed = (await verifyAloInDetail()).modes['at-least-once'];
      if (!detailed) throw new Error('no outcome for at-least-once');
      const { events, ...counts } = detailed;

      expect(counts).toEqual(plain.modes['at-least-once']);
      const states = [...(events?.states ?? '')];
      const count = (state: string) => states.filter((s) => s === state).length;
      const appliedOnceAndDeadLettered = states.filter(
        (s, index) => s === 'a' && events?.applications[index] === 1,
      ).length;
      expect(counts).toMatchObject({
        // 'a' is also counted as applied once (or duplicated) by the counts.
        appliedOnce: count('o') + appliedOnceAndDeadLettered,
        duplicated: count('d'),
        appliedAndDeadLettered: count('a'),
        deadLettered: count('x') + count('h') + count('p'),
        lost: count('l') + count('q'),
        unexpected: count('u') + (events?.unexpectedEventIds.length ?? 0),
        crashes: 6,
      });
      const crashed = events?.crashes.flatMap((list) => (list === '' ? [] : list.split(','))) ?? [];
      expect(crashed.length + (events?.unattributedCrashes ?? 0)).toBe(counts.crashes);
    });

    it('buckets applications and crashes per second from the earliest of both', async () => {
      everyState();

      const timeline = (await verifyAloInDetail()).modes['at-least-once']?.events?.timeline;

      expect(timeline).toEqual({
        startMs: T + 100,
        bucketMs: 1000,
        // 0–1 s: o, d, a, u, z; 1–2 s: d; 2–3 s: d.
        applications: [5, 1, 1],
        // 0–1 s: d#1, e5-l twice; 1–2 s: d#2, msg-xyz; 2–3 s: d#10.
        crashes: [3, 2, 1],
      });
    });

    it('makes buckets coarser for a long run, so a timeline has at most 300', () => {
      const hour = 3_600_000;
      const timeline = buildTimeline([T, T + hour], [T + hour / 2]);
      expect(timeline.bucketMs).toBe(13_000);
      expect(timeline.applications.length).toBeLessThanOrEqual(MAX_TIMELINE_BUCKETS);
      expect(timeline.applications.reduce((a, b) => a + b)).toBe(2);
      expect(timeline.crashes.reduce((a, b) => a + b)).toBe(1);
      expect(buildTimeline([], [])).toEqual({ startMs: 0, bucketMs: 1000, applications: [], crashes: [] });
    });

    it('without events, returns counts only: reads no crash items and projects no receive counts', async () => {
      everyState();

      const result = await verifyRun(deps, { runId: RUN, modes: ['at-least-once'] });

      expect(result.manifest).toBeUndefined();
      expect(result.eventsOmitted).toBeUndefined();
      expect(result.modes['at-least-once']).not.toHaveProperty('events');
      const queries = ddb.commandCalls(QueryCommand).map((call) => call.args[0].input);
      expect(queries.some((input) => input.ExpressionAttributeValues?.[':prefix'] === 'CRASH#')).toBe(false);
      const projected = queries.flatMap((input) => Object.values(input.ExpressionAttributeNames ?? {}));
      expect(projected).not.toContain('receiveCount');
      // at-least-once's applications are lists on its balance items (each entry with its receive
      // count and time): those are read whole, and the receive counts left out of the outcome.
      const balances = queries.filter((input) => input.ExpressionAttributeValues?.[':prefix'] === 'BAL#');
      expect(balances.some((input) => input.ProjectionExpression === undefined)).toBe(true);
    });

    it('rejects an events flag that is not a boolean', async () => {
      await expect(verifyRun(deps, { runId: RUN, events: 'yes' })).rejects.toThrow(/events/);
    });

    /**
     * A run of `size` events in the producer's id format, each applied once by each of `modes`, 5%
     * twice, 5% crashed (the manifest names every mode: the others have no applications).
     */
    function largeRun(size: number, modes: readonly Mode[] = MODE_NAMES): void {
      const ids = Array.from({ length: size }, (_, index) => `evt-${String(index).padStart(6, '0')}`);
      const items: Item[] = [
        ...ids.map((eventId, index) => ({
          pk: MANIFEST,
          sk: `EVT#${eventId}`,
          eventId,
          accountId: `acct-${String(index % 100).padStart(2, '0')}`,
          amountCents: 1 + ((index * 7919) % 10_000),
          ...(index % 50 === 0 ? { poison: 'near-size-limit' } : {}),
        })),
        {
          pk: MANIFEST,
          sk: 'SUMMARY',
          produced: size,
          poison: Math.ceil(size / 50),
          producerDuplicates: 0,
          expectedCents: 0,
          modes: [...MODE_NAMES],
        },
      ];
      for (const mode of modes) {
        const pk = `RUN#${RUN}#MODE#${mode}`;
        ids.forEach((eventId, index) => {
          // seq and state: what a state mode's records carry besides (the others' ignore them).
          const state = { accountId: `acct-${index % 100}`, seq: index + 1, balanceAfterCents: 0 };
          items.push(applied(eventId, 1, index * 3, state, pk));
          if (index % 20 === 0) {
            items.push(applied(eventId, 2, index * 3 + 30_000, { seq: index + 1, balanceAfterCents: 0 }, pk));
            items.push(crash(eventId, 1, index * 3 + 1, 1, pk));
          }
        });
      }
      serveLedger(ddb, items, 1000);
    }

    /**
     * The response grows linearly with the events (fixed-width ids, one state per event and mode):
     * npm test detail-verifies a tenth of the cap and scales its bytes up; test:soak runs the cap
     * itself (about 10 CPU-seconds through the mocked ledger).
     */
    const DETAILED = process.env.SOAK === '1' ? MAX_DETAILED_EVENTS : MAX_DETAILED_EVENTS / 10;

    it(`returns detail for ${MAX_DETAILED_EVENTS} events × every mode well under Lambda's 6 MB response limit (run at ${DETAILED})`, async () => {
      largeRun(DETAILED);

      const result = await verifyRun(deps, { runId: RUN, events: true });

      expect(result.manifest?.eventIds).toHaveLength(DETAILED);
      for (const mode of MODE_NAMES) expect(result.modes[mode]?.events?.states).toHaveLength(DETAILED);
      const bytes = Buffer.byteLength(JSON.stringify(result)) * (MAX_DETAILED_EVENTS / DETAILED);
      console.info(
        `verifier response, ${MAX_DETAILED_EVENTS} events × ${MODE_NAMES.length} modes: ${bytes} bytes` +
          (DETAILED === MAX_DETAILED_EVENTS ? '' : ` (scaled from ${DETAILED} events)`),
      );
      // 12 modes took 3.3 MB: room left under the limit, which the detail's byte guard enforces.
      expect(bytes).toBeLessThan(6 * 1024 * 1024 * 0.6);
    }, 60_000);

    it('omits the detail when its bytes would not fit in one response, whatever the event count', async () => {
      largeRun(200);

      const counts = await verifyRun(deps, { runId: RUN });
      const result = await verifyRun({ ...deps, maxDetailBytes: 10_000 }, { runId: RUN, events: true });

      expect(result.eventsOmitted).toMatch(/bytes, more than the 10000 that fit/);
      expect(result.manifest).toBeUndefined();
      expect(result.modes).toEqual(counts.modes);
    });

    it(`returns the detail for exactly ${MAX_DETAILED_EVENTS} events (the cap is inclusive, as the experiment's)`, async () => {
      largeRun(MAX_DETAILED_EVENTS, ['at-least-once']);

      const result = await verifyRun(deps, { runId: RUN, modes: ['at-least-once'], events: true });

      expect(result.eventsOmitted).toBeUndefined();
      expect(result.manifest?.eventIds).toHaveLength(MAX_DETAILED_EVENTS);
      expect(result.modes['at-least-once']?.events?.states).toHaveLength(MAX_DETAILED_EVENTS);
    }, 60_000);

    it(`omits the detail above ${MAX_DETAILED_EVENTS} events and says why, with the counts unchanged`, async () => {
      largeRun(MAX_DETAILED_EVENTS + 1, ['at-least-once']);

      const result = await verifyRun(deps, { runId: RUN, modes: ['at-least-once'], events: true });

      expect(result.manifest).toBeUndefined();
      expect(result.eventsOmitted).toMatch(/20001 events.*at most 20000/);
      expect(result.modes['at-least-once']).not.toHaveProperty('events');
      expect(result.modes['at-least-once']).toMatchObject({
        produced: MAX_DETAILED_EVENTS + 1,
        // Every 20th applied twice, less the poison among them (every 100th): poison applied is
        // unexpected, however often (every 50th).
        duplicated: 800,
        unexpected: 401,
      });
    }, 60_000);
  });
});

describe('joinByEventId', () => {
  async function* stream<T>(items: T[]): AsyncGenerator<T> {
    yield* items;
  }
  /** The join of a FIFO mode with nothing applied: the last event seen per account, the DLQ's unseen messages. */
  async function joinFifo(
    manifest: ManifestEvent[],
    dead: Iterable<readonly [string, ReadonlySet<string>]>,
    lastSeen: Record<string, string>,
    unseenMessages: number,
  ) {
    const states: (string | undefined)[] = [];
    const counts = await joinByEventId(
      stream(manifest),
      stream([]),
      dead,
      (event) => states.push(event.state),
      {
        fifoDeadLetters: { lastSeenOfAccount: new Map(Object.entries(lastSeen)), unseenMessages },
      },
    );
    return { counts, states };
  }

  const event = (eventId: string) => ({ eventId, accountId: 'x', amountCents: 1 });

  it('refuses streams out of event-id order instead of producing plausible numbers', async () => {
    await expect(joinByEventId(stream([event('b'), event('a')]), stream([]), [])).rejects.toThrow(
      /out of order/,
    );
  });

  it('counts events first applied after a later event of their account, by seq and application time', async () => {
    // Account x: seq 1 at t=10, seq 3 at t=20, seq 2 at t=30 (after 3: one violation), seq 4 at
    // t=40 and again at t=45 (its first application counts: none). Account y: seq 2 at t=1, seq 1
    // at t=2 (one), and an event without a seq (an older manifest: not counted).
    const manifest = [
      { eventId: 'a', accountId: 'x', amountCents: 1, seq: 1 },
      { eventId: 'b', accountId: 'x', amountCents: 1, seq: 2 },
      { eventId: 'c', accountId: 'x', amountCents: 1, seq: 3 },
      { eventId: 'd', accountId: 'x', amountCents: 1, seq: 4 },
      { eventId: 'e', accountId: 'y', amountCents: 1, seq: 1 },
      { eventId: 'f', accountId: 'y', amountCents: 1, seq: 2 },
      { eventId: 'g', accountId: 'y', amountCents: 1 },
    ];
    const applied = (eventId: string, ...appliedAtMs: number[]) => ({
      eventId,
      applications: appliedAtMs.length,
      cents: appliedAtMs.length,
      payloadHashes: new Set([payloadHash({ accountId: eventId < 'e' ? 'x' : 'y', amountCents: 1 })]),
      appliedAtMs,
    });
    const counts = await joinByEventId(
      stream(manifest),
      stream([
        applied('a', 10),
        applied('b', 30),
        applied('c', 20),
        applied('d', 45, 40),
        applied('e', 2),
        applied('f', 1),
        applied('g', 0),
      ]),
      [],
      undefined,
      { keepOutOfOrderIds: true },
    );
    expect(counts.orderViolations).toBe(2);
    // Which ones, for the page: b (seq 2 after seq 3) and e (seq 1 after seq 2).
    expect([...(counts.outOfOrderEventIds ?? [])].sort()).toEqual(['b', 'e']);
  });

  it('counts an unapplied, unseen event of an account whose group heads the FIFO DLQ as dead-lettered unseen, and nothing else', async () => {
    // Account x: seq 1–2 applied; seq 3 in the DLQ, seen by the sweep at the head of x's group;
    // seq 4 is poison and seq 5 valid, both unseen behind it. Account y has nothing in the DLQ:
    // its unapplied seq 1 is lost, whatever x's state.
    const manifest = [
      { eventId: 'a', accountId: 'x', amountCents: 10, seq: 1 },
      { eventId: 'b', accountId: 'x', amountCents: 20, seq: 2 },
      { eventId: 'c', accountId: 'x', amountCents: 30, seq: 3 },
      { eventId: 'd', accountId: 'x', amountCents: 40, seq: 4, poison: 'wrong-type' as const },
      { eventId: 'e', accountId: 'x', amountCents: 50, seq: 5 },
      { eventId: 'f', accountId: 'y', amountCents: 60, seq: 1 },
    ];
    const applied = (eventId: string, amountCents: number) => ({
      eventId,
      applications: 1,
      cents: amountCents,
      payloadHashes: new Set([payloadHash({ accountId: 'x', amountCents })]),
    });
    const dead: [string, Set<string>][] = [
      ['c', new Set([payloadHash({ accountId: 'x', amountCents: 30 })])],
    ];

    const counts = await joinByEventId(
      stream(manifest),
      stream([applied('a', 10), applied('b', 20)]),
      dead,
      undefined,
      { fifoDeadLetters: { lastSeenOfAccount: new Map([['x', 'c']]), unseenMessages: 2 } },
    );

    expect(counts).toMatchObject({ appliedOnce: 2, deadLettered: 3, deadLetteredUnseen: 2, lost: 1 });
    // Only the valid events' money is in the DLQ: c and e, not the poison d.
    expect(counts.deadLetteredCents).toBe(30 + 50);
  });

  it('infers no more events behind the heads than the DLQ has unseen messages: the last ones in id order are lost, with their money', async () => {
    const manifest = ['a', 'b', 'c', 'd'].map((eventId, index) => ({
      eventId,
      accountId: 'x',
      amountCents: 10 ** index,
      seq: index + 1,
    }));
    const dead: [string, Set<string>][] = [['a', new Set([payloadHash({ accountId: 'x', amountCents: 1 })])]];
    const { counts, states } = await joinFifo(manifest, dead, { x: 'a' }, 2);

    expect(counts).toMatchObject({
      deadLettered: 3,
      deadLetteredUnseen: 2,
      lost: 1,
      unseenBeyondCapacity: 1,
    });
    // a seen, b and c inferred, d lost: the money counted is exactly the dead-lettered events'.
    expect(counts.deadLetteredCents).toBe(1 + 10 + 100);
    // a seen, b and c behind its head (h), d past the room: lost.
    expect(states).toEqual(['x', 'h', 'h', 'l']);
  });

  it("never infers an event before its account's head: a loss before the first dead letter stays a loss", async () => {
    // x's seq 1 vanished; its successors were refused as a gap and dead-lettered, seq 2 at the head.
    // The DLQ has room to spare (another account's hidden copies): seq 1 is still lost.
    const manifest = ['a', 'b', 'c'].map((eventId, index) => ({
      eventId,
      accountId: 'x',
      amountCents: 10,
      seq: index + 1,
    }));
    const dead: [string, Set<string>][] = [
      ['b', new Set([payloadHash({ accountId: 'x', amountCents: 10 })])],
    ];

    const counts = await joinByEventId(stream(manifest), stream([]), dead, undefined, {
      fifoDeadLetters: { lastSeenOfAccount: new Map([['x', 'b']]), unseenMessages: 5 },
    });

    expect(counts).toMatchObject({ lost: 1, deadLettered: 2, deadLetteredUnseen: 1 });
  });

  it('never infers an event inside the head: only what comes after the last event the sweep saw can hide', async () => {
    // x's seqs 1–6: the sweep saw 1, 2 and 4 (the group's head); 3 is really gone; 5 and 6 hide
    // behind the head, and the DLQ holds exactly two unseen messages.
    const ids = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'];
    const manifest = ids.map((eventId, index) => ({
      eventId,
      accountId: 'x',
      amountCents: 10,
      seq: index + 1,
    }));
    const hash = new Set([payloadHash({ accountId: 'x', amountCents: 10 })]);
    const dead: [string, Set<string>][] = [
      ['e1', hash],
      ['e2', hash],
      ['e4', hash],
    ];
    const { counts, states } = await joinFifo(manifest, dead, { x: 'e4' }, 2);

    expect(states).toEqual(['x', 'x', 'l', 'x', 'h', 'h']);
    expect(counts).toMatchObject({ lost: 1, deadLettered: 5, deadLetteredUnseen: 2, deadLetteredCents: 50 });
  });

  it('counts an unseen event as lost when no group of the DLQ is its account, and an applied one as applied', async () => {
    const manifest = [
      { eventId: 'a', accountId: 'x', amountCents: 10, seq: 1 },
      { eventId: 'b', accountId: 'y', amountCents: 20, seq: 1 },
    ];
    const applied = {
      eventId: 'a',
      applications: 1,
      cents: 10,
      payloadHashes: new Set([payloadHash(manifest[0] as never)]),
    };
    const counts = await joinByEventId(stream(manifest), stream([applied]), [], undefined, {
      fifoDeadLetters: {
        lastSeenOfAccount: new Map([
          ['x', 'a'],
          ['z', 'q'],
        ]),
        unseenMessages: 10,
      },
    });
    expect(counts).toMatchObject({ appliedOnce: 1, lost: 1, deadLetteredUnseen: 0, deadLettered: 0 });
  });

  it('orders ids the way DynamoDB orders their sort keys (a before a-b before a0)', async () => {
    const counts = await joinByEventId(stream([event('a'), event('a-b'), event('a0')]), stream([]), []);
    expect(counts.lost).toBe(3);
  });
});

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PurgeQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictingReuseError } from '../../contract/errors.js';
import { EVENT_ID_ATTRIBUTE, fifoIdsOf, type MessageBody, RUN_ID_ATTRIBUTE } from '../../contract/message.js';
import { DEFAULT_RETENTION, retentionOf } from '../../contract/retention.js';
import { MODE_NAMES, type Mode } from '../../contract/topology.js';
import { type EmbeddedEnvironment, startEmbeddedEnvironment } from '../../harness/environments/embedded.js';
import { DEFAULTS } from '../../harness/options/declaration.js';
import { runExperiment } from '../../harness/run/experiment.js';
import { creditAccount, type Ledger, recordRefusal } from '../../modes/kit/ledger.js';
import type { ModeEventDetails } from '../../verifier/event-details.js';
import { type ManifestEvent, writeManifestEvents, writeManifestSummary } from '../../verifier/manifest.js';
import { experimentConfig } from '../support/embedded-run.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

const RUN = 'verifier-it';
/** The modes whose consumers run, for the one case that runs a real experiment; the others write the ledger directly. */
const RUNNING_MODES = ['at-most-once', 'at-least-once'] as const satisfies readonly Mode[];
const CRASH_RATE = 0.2;
const EVENTS: ManifestEvent[] = [
  { eventId: 'evt-a', accountId: 'acct-1', amountCents: 100 },
  { eventId: 'evt-b', accountId: 'acct-1', amountCents: 200 },
  { eventId: 'evt-c', accountId: 'acct-2', amountCents: 400 },
];
const [a, b] = EVENTS as [ManifestEvent, ManifestEvent, ManifestEvent];

let env: EmbeddedEnvironment;

const delivery = (n: number) => ({ messageId: `m-${n}`, receiveCount: n, requestId: `r-${n}`, position: 0 });
const CREATED_AT = new Date().toISOString();
const body = (event: ManifestEvent) => ({ ...event, runId: RUN, seq: 1, createdAt: CREATED_AT });
const ledger = (mode: Mode, ddb: DynamoDBDocumentClient = env.ddb): Ledger => ({
  ddb,
  tableName: env.tableName,
  mode,
  retention: DEFAULT_RETENTION,
});

/** A client whose transactions lose their conditions on the way out: the marker's guard, removed. */
function withoutConditions(): DynamoDBDocumentClient {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: env.local.dynamodbEndpoint,
      region: env.local.region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as Partial<TransactWriteCommandInput>;
      for (const item of input.TransactItems ?? []) {
        if (item.Update) {
          delete item.Update.ConditionExpression;
          // DynamoDB refuses names and values no expression uses: the marker condition's own.
          delete item.Update.ExpressionAttributeNames?.['#dedupeUntil'];
          delete item.Update.ExpressionAttributeValues?.[':now'];
        }
        if (item.Put) delete item.Put.ConditionExpression;
      }
      return next(args);
    },
    { step: 'initialize', name: 'removeConditions' },
  );
  return client;
}

beforeAll(async () => {
  env = await startEmbeddedEnvironment({
    modes: RUNNING_MODES,
    crashRate: CRASH_RATE,
    crashSeed: 'verifier-it',
    visibilityTimeoutSeconds: DEFAULTS.visibilityTimeoutSeconds,
    // Poison reaches the DLQ after two receives, not ten: the run stays short.
    maxReceiveCount: 2,
    dynamodb: await sharedDynamoDb('verifier'),
  });
  await writeManifest(RUN, EVENTS, MODE_NAMES);
});

/** A run's manifest, as the producer writes it: every event, then the summary. */
async function writeManifest(run: string, events: readonly ManifestEvent[], modes: readonly Mode[]) {
  const store = { ddb: env.ddb, tableName: env.tableName };
  await writeManifestEvents(store, run, events);
  await writeManifestSummary(store, run, {
    produced: events.length,
    poison: 0,
    producerDuplicates: 0,
    expectedCents: events.reduce((sum, event) => sum + event.amountCents, 0),
    modes,
  });
}

afterAll(async () => {
  await env?.stop();
});

describe('the verifier against DynamoDB Local and fauxqs (real bundle, real tables)', () => {
  it('catches a removed marker condition as a duplicate, an unexpected application and a lost event, by id', async () => {
    // effectively-once with its guard removed: event a applied twice; b once with the guard on; c never.
    const unguarded = ledger('effectively-once', withoutConditions());
    await creditAccount(unguarded, body(a), delivery(1), { idempotent: true });
    await creditAccount(unguarded, body(a), delivery(2), { idempotent: true });
    const guarded = ledger('effectively-once');
    expect(await creditAccount(guarded, body(b), delivery(1), { idempotent: true })).toBe('applied');
    expect(await creditAccount(guarded, body(b), delivery(2), { idempotent: true })).toBe('duplicate');

    // A mode with a record per application (Powertools' credit): a and b once, and an event the
    // producer never sent; c never. A count (3 applied of 3 produced) would call this exact.
    const alo = ledger('powertools-idempotency');
    await creditAccount(alo, body(a), delivery(1), { idempotent: false });
    await creditAccount(alo, body(b), delivery(1), { idempotent: false });
    await creditAccount(
      alo,
      { eventId: 'evt-z', runId: RUN, accountId: 'acct-9', amountCents: 400, seq: 1, createdAt: CREATED_AT },
      delivery(1),
      { idempotent: false },
    );

    // A reused id with another amount, dead-lettered (as effectively-once does with it).
    await env.sqs.send(
      new SendMessageCommand({
        QueueUrl: env.local.deadLetterQueueUrls['powertools-idempotency'],
        MessageBody: JSON.stringify({ ...body(a), amountCents: 999 }),
        MessageAttributes: {
          [RUN_ID_ATTRIBUTE]: { DataType: 'String', StringValue: RUN },
          [EVENT_ID_ATTRIBUTE]: { DataType: 'String', StringValue: a.eventId },
        },
      }),
    );

    const { result } = await env.invokeVerifier(RUN, MODE_NAMES);

    expect(result.modes['effectively-once']).toMatchObject({
      appliedOnce: 1,
      duplicated: 1,
      extraApplications: 1,
      lost: 1,
      unexpected: 0,
      consistent: true,
    });
    expect(result.modes['powertools-idempotency']).toMatchObject({
      appliedOnce: 2,
      duplicated: 0,
      lost: 1,
      unexpected: 1,
      conflictingReuse: 1,
      deadLettered: 0,
      driftCents: 0,
      consistent: true,
    });
    expect(result.modes['at-most-once']).toMatchObject({ appliedOnce: 0, lost: 3, unexpected: 0 });
  });

  it("forgets an event at its marker's expiry (DynamoDB Local evaluates dedupeUntil) and counts the guard's refusals", async () => {
    const run = 'verifier-it-expiry';
    const events = [
      { eventId: 'evt-e', accountId: 'acct-1', amountCents: 100 },
      { eventId: 'evt-f', accountId: 'acct-1', amountCents: 200 },
    ];
    const store = { ddb: env.ddb, tableName: env.tableName };
    await writeManifestEvents(store, run, events);
    await writeManifestSummary(store, run, {
      produced: 2,
      poison: 0,
      producerDuplicates: 0,
      expectedCents: 300,
      modes: MODE_NAMES,
    });
    // A 10 s marker, and a clock moved by hand: written at t, a duplicate at t + 10 s, forgotten after.
    const t = Date.now();
    const at = (ms: number): Ledger => ({
      ...ledger('effectively-once'),
      retention: retentionOf(10),
      now: () => ms,
    });
    const [e, f] = events.map((event) => ({
      ...event,
      runId: run,
      seq: 1,
      createdAt: new Date(t).toISOString(),
    })) as [MessageBody, MessageBody];
    expect(await creditAccount(at(t), e, delivery(1), { idempotent: true })).toBe('applied');
    expect(await creditAccount(at(t + 10_000), e, delivery(2), { idempotent: true })).toBe('duplicate');
    expect(await creditAccount(at(t + 11_000), e, delivery(3), { idempotent: true })).toBe('applied');
    // The second window remembers again: a third copy right after is a duplicate.
    expect(await creditAccount(at(t + 12_000), e, delivery(4), { idempotent: true })).toBe('duplicate');
    await recordRefusal(at(t + 20_000), f, 20);
    await recordRefusal(at(t + 21_000), f, 21);

    const { result } = await env.invokeVerifier(run, ['effectively-once']);

    // The marker item stayed as evidence: its two applications are a duplicate, not a lost event.
    expect(result.modes['effectively-once']).toMatchObject({
      duplicated: 1,
      extraApplications: 1,
      lost: 1,
      tooOldToDedupe: 1,
      driftCents: -100,
      consistent: true,
    });
  });

  it('joins ids that share prefixes in the order DynamoDB Local returns their keys (markers and per-delivery records)', async () => {
    const run = 'verifier-it-order';
    // Every identifier character sorts after '#': 'a' < 'a-b' < 'a.b' < 'a0' < 'a:b' < 'a_' < 'ab'.
    const ids = ['ab', 'a_', 'a:b', 'a0', 'a.b', 'a-b', 'a', 'A'];
    const events = ids.map((eventId) => ({ eventId, accountId: 'acct-1', amountCents: 10 }));
    const store = { ddb: env.ddb, tableName: env.tableName };
    await writeManifestEvents(store, run, events);
    await writeManifestSummary(store, run, {
      produced: events.length,
      poison: 0,
      producerDuplicates: 0,
      expectedCents: 10 * events.length,
      modes: MODE_NAMES,
    });
    for (const event of events) {
      const message = { ...event, runId: run, seq: 1, createdAt: CREATED_AT };
      await creditAccount(ledger('effectively-once'), message, delivery(1), { idempotent: true });
      await creditAccount(ledger('powertools-idempotency'), message, delivery(1), { idempotent: false });
    }
    // Two deliveries of 'a': its records must stay adjacent to each other, not split by 'a-b'.
    await creditAccount(
      ledger('powertools-idempotency'),
      { eventId: 'a', runId: run, accountId: 'acct-1', amountCents: 10, seq: 1, createdAt: CREATED_AT },
      delivery(2),
      { idempotent: false },
    );

    const { result } = await env.invokeVerifier(run, ['powertools-idempotency', 'effectively-once']);

    expect(result.modes['effectively-once']).toMatchObject({ appliedOnce: 8, duplicated: 0, lost: 0 });
    expect(result.modes['powertools-idempotency']).toMatchObject({
      appliedOnce: 7,
      duplicated: 1,
      lost: 0,
      unexpected: 0,
    });
  });

  it('effectively-once refuses a reused event id with another amount: DynamoDB Local returns the old marker with the cancellation', async () => {
    const run = 'verifier-it-reuse';
    const eo = ledger('effectively-once');
    const first = {
      eventId: 'evt-r',
      runId: run,
      accountId: 'acct-1',
      amountCents: 100,
      seq: 1,
      createdAt: CREATED_AT,
    };
    await creditAccount(eo, first, delivery(1), { idempotent: true });

    await expect(creditAccount(eo, first, delivery(2), { idempotent: true })).resolves.toBe('duplicate');
    await expect(
      creditAccount(eo, { ...first, amountCents: 999 }, delivery(3), { idempotent: true }),
    ).rejects.toThrow(ConflictingReuseError);
  });

  it('returns per-event detail for a small run that adds up to its counts (real consumers, crashes and poison)', async () => {
    const config = experimentConfig({
      messages: 30,
      accounts: 3,
      seed: 'verifier-it',
      crashRate: CRASH_RATE,
      modes: RUNNING_MODES,
      maxReceiveCount: 2,
      faults: { poisonRate: 0.1 },
    });

    const report = await runExperiment(env, config, 'verifier-it-detail', { phase: () => undefined });

    const manifest = report.manifest;
    expect(manifest?.eventIds).toHaveLength(30);
    // Production order: the producer's zero-padded ids.
    expect(manifest?.eventIds).toEqual([...(manifest?.eventIds ?? [])].sort());
    expect(manifest?.poison.filter((kind) => kind !== null).length).toBe(
      report.modes['at-least-once']?.poison,
    );
    for (const mode of RUNNING_MODES) {
      const outcome = report.modes[mode];
      const events = outcome?.events;
      if (!outcome || !events) throw new Error(`no per-event detail for ${mode}`);
      expect(tally(events)).toEqual({
        applied: outcome.appliedOnce + outcome.duplicated,
        duplicated: outcome.duplicated,
        extraApplications: outcome.extraApplications,
        deadLettered: outcome.deadLettered,
        lost: outcome.lost,
        unexpected: outcome.unexpected,
        appliedAndDeadLettered: outcome.appliedAndDeadLettered,
        crashes: outcome.crashes,
        // No unknown ids in a real run: every application is some manifest event's.
        timelineApplications: events.applications.reduce((total, value) => total + value, 0),
        timelineCrashes: outcome.crashes,
      });
      // Every application record carries the receive count it was applied at (no markers here).
      events.receiveCounts.forEach((counts, index) => {
        expect(counts === '' ? 0 : counts.split(',').length).toBe(events.applications[index]);
      });
    }
    // The seed crashes some handlers: the detail must show where, not only how many.
    expect(report.modes['at-least-once']?.crashes).toBeGreaterThan(0);
    expect(report.modes['at-least-once']?.events?.crashes.some((crashes) => crashes !== '')).toBe(true);
  }, 180_000);

  it("counts every event of a FIFO DLQ, those behind a group's head too, and what the DLQ cannot hold as lost", async () => {
    // An outage dead-letters whole accounts in order, with no gap: acct-1's 14 messages and acct-2's
    // 2 sit in fauxqs's FIFO DLQ. A sweep that does not delete sees 10 of acct-1 (its group's head)
    // and both of acct-2. acct-1's seq 15 and acct-3's seq 1 were never sent anywhere: lost.
    const run = 'verifier-fifo-it';
    const fifo = (accountId: string, count: number) =>
      Array.from({ length: count }, (_, index) => ({
        eventId: `evt-${accountId}-${String(index + 1).padStart(2, '0')}`,
        accountId,
        amountCents: 10 * (index + 1),
        seq: index + 1,
      }));
    const events = [...fifo('acct-1', 15), ...fifo('acct-2', 2), ...fifo('acct-3', 1)];
    await writeManifest(run, events, ['fifo-versioned']);
    const deadLetterQueueUrl = env.local.deadLetterQueueUrls['fifo-versioned'];
    const inDlq = events.filter((event) => event.accountId !== 'acct-3' && event.seq < 15);
    for (const event of inDlq) {
      await env.sqs.send(
        new SendMessageCommand({
          QueueUrl: deadLetterQueueUrl,
          MessageBody: JSON.stringify({ ...event, runId: run, createdAt: CREATED_AT }),
          ...fifoIdsOf(run, event.accountId, event.eventId),
          MessageAttributes: {
            [RUN_ID_ATTRIBUTE]: { DataType: 'String', StringValue: run },
            [EVENT_ID_ATTRIBUTE]: { DataType: 'String', StringValue: event.eventId },
          },
        }),
      );
    }
    try {
      const { result } = await env.invokeVerifier(run, ['fifo-versioned']);
      const inDlqCents = inDlq.reduce((sum, event) => sum + event.amountCents, 0);
      expect(result.modes['fifo-versioned']).toMatchObject({
        appliedOnce: 0,
        // 12 seen, 4 more behind acct-1's head: the DLQ holds 16 messages, so the 5th unseen event
        // of acct-1 (its seq 15) finds no room, and acct-3 has no head in the DLQ at all.
        deadLettered: 16,
        deadLetteredUnseen: 4,
        lost: 2,
      });
      // The money is exactly the DLQ's: seq 15, past the room the DLQ has, is lost with its money.
      expect(result.modes['fifo-versioned']?.deadLetteredCents).toBe(inDlqCents);
      // The sweep left the queue as it found it.
      const again = await env.invokeVerifier(run, ['fifo-versioned']);
      expect(again.result.modes['fifo-versioned']).toMatchObject({ deadLettered: 16, lost: 2 });
    } finally {
      await env.sqs.send(new PurgeQueueCommand({ QueueUrl: deadLetterQueueUrl }));
    }
  }, 60_000);
});

/** What the per-event detail says, in the terms of the counts. */
function tally(events: ModeEventDetails) {
  const states = [...events.states];
  const count = (state: string) => states.filter((candidate) => candidate === state).length;
  const applications = (index: number) => events.applications[index] ?? 0;
  const validApplied = states.flatMap((state, index) => ('oda'.includes(state) ? [index] : []));
  const crashed = events.crashes.flatMap((crashes) => (crashes === '' ? [] : crashes.split(',')));
  const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
  return {
    applied: validApplied.length,
    duplicated: validApplied.filter((index) => applications(index) > 1).length,
    extraApplications: sum(validApplied.map((index) => applications(index) - 1)),
    deadLettered: count('x') + count('h') + count('p'),
    lost: count('l') + count('q'),
    unexpected: count('u') + events.unexpectedEventIds.length,
    appliedAndDeadLettered: count('a'),
    crashes: crashed.length + events.unattributedCrashes,
    timelineApplications: sum(events.timeline.applications),
    timelineCrashes: sum(events.timeline.crashes),
  };
}

import { createHash } from 'node:crypto';
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { sizedBatches } from '../../contract/chunks.js';
import {
  EVENT_ID_ATTRIBUTE,
  fifoIdsOf,
  MAX_AMOUNT_CENTS,
  type MessageBody,
  RUN_ID_ATTRIBUTE,
} from '../../contract/message.js';
import { isFifoMode, type Mode, STORAGE } from '../../contract/topology.js';
import type { Manifest, ManifestEvent, OutgoingMessage } from '../../verifier/manifest.js';
import type { ExperimentEnvironment } from '../environments/environment.js';
import { type FaultSettings, faultDraw, faultHits } from '../local-aws/faults/faults.js';
import { forEachConcurrently } from './concurrently.js';

/** mulberry32: a small, well-known seeded PRNG; the run's amounts and accounts follow from the seed. */
function seededRandom(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32BE(0);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** SQS's limit for one message and for one SendMessageBatch, body and attributes together. */
export const SQS_MAX_PAYLOAD_BYTES = STORAGE.maxMessageBytes;

/**
 * Invalid bodies of every kind a handler must refuse. Each names its event (attribute and, where
 * the kind allows, body), so the DLQ sweep can tell whose it is.
 */
export const POISON_KINDS = {
  'malformed-json': (event: MessageBody) => JSON.stringify(event).slice(0, -9),
  'missing-field': ({ amountCents: _, ...rest }: MessageBody) => JSON.stringify(rest),
  'wrong-type': (event: MessageBody) => JSON.stringify({ ...event, amountCents: String(event.amountCents) }),
  'zero-amount': (event: MessageBody) => JSON.stringify({ ...event, amountCents: 0 }),
  'negative-amount': (event: MessageBody) => JSON.stringify({ ...event, amountCents: -event.amountCents }),
  'fractional-amount': (event: MessageBody) =>
    JSON.stringify({ ...event, amountCents: event.amountCents + 0.5 }),
  'huge-amount': (event: MessageBody) => JSON.stringify({ ...event, amountCents: MAX_AMOUNT_CENTS * 1e6 }),
  'unknown-field': (event: MessageBody) => JSON.stringify({ ...event, note: 'not in the schema' }),
  // Just under SQS's limit once the message attributes are added; the schema must echo none of it.
  'near-size-limit': (event: MessageBody) =>
    JSON.stringify({ ...event, padding: 'x'.repeat(SQS_MAX_PAYLOAD_BYTES - 2_048) }),
} as const satisfies Record<string, (event: MessageBody) => string>;

export type PoisonKind = keyof typeof POISON_KINDS;
const POISON_KIND_NAMES = Object.keys(POISON_KINDS) as PoisonKind[];

/**
 * The producer's manifest: `messages` events over `accounts` accounts, amounts in cents, all
 * derived from the seed. Event ids are stamped here, once per logical event, and stay the same on
 * every re-send: they are the idempotency key. Poison and re-sends are drawn per event from the
 * seed, so every mode gets the same ones.
 */
export function buildManifest(
  runId: string,
  seed: string,
  messages: number,
  accounts: number,
  faults: Pick<FaultSettings, 'poisonRate' | 'producerDuplicateRate'> = {
    poisonRate: 0,
    producerDuplicateRate: 0,
  },
  /** When the events were created (every body's `createdAt`): the run's start. */
  createdAt: Date = new Date(),
): Manifest {
  const random = seededRandom(seed);
  const width = String(Math.max(0, accounts - 1)).length;
  const events: ManifestEvent[] = [];
  const outgoing: OutgoingMessage[] = [];
  let expectedCents = 0;
  let poison = 0;
  let producerDuplicates = 0;
  /** Per account, the seq of its last event: every event (poison too) takes the next position. */
  const lastSeq = new Map<string, number>();
  /** Per account, the sum of its valid events so far: each body's balanceAfterCents (state events). */
  const balance = new Map<string, number>();
  for (let index = 0; index < messages; index += 1) {
    const amountCents = 1 + Math.floor(random() * 10_000);
    const account = Math.floor(random() * accounts);
    const accountId = `acct-${String(account).padStart(width, '0')}`;
    const seq = (lastSeq.get(accountId) ?? 0) + 1;
    lastSeq.set(accountId, seq);
    const eventId = `evt-${String(index).padStart(6, '0')}`;
    const isPoison = faultHits(faults.poisonRate, seed, 'poison', eventId);
    // A poison event is never applied, so the balance after it is the balance before it.
    const balanceAfterCents = (balance.get(accountId) ?? 0) + (isPoison ? 0 : amountCents);
    balance.set(accountId, balanceAfterCents);
    const body: MessageBody = {
      eventId,
      runId,
      accountId,
      amountCents,
      seq,
      balanceAfterCents,
      createdAt: createdAt.toISOString(),
    };
    // The manifest keeps the event's delta; its state follows from the manifest, in seq order.
    const { runId: _, createdAt: __, balanceAfterCents: ___, ...event } = body;
    if (isPoison) {
      const kind = POISON_KIND_NAMES[
        Math.floor(faultDraw(seed, 'poison-kind', body.eventId) * POISON_KIND_NAMES.length)
      ] as PoisonKind;
      events.push({ ...event, poison: kind });
      // Rendered when sent, not kept: a run of 100,000 events must not hold hundreds of 1 MiB bodies.
      outgoing.push({
        eventId: body.eventId,
        accountId,
        get body() {
          return POISON_KINDS[kind](body);
        },
      });
      poison += 1;
      continue;
    }
    events.push(event);
    expectedCents += amountCents;
    const json = JSON.stringify(body);
    outgoing.push({ eventId: body.eventId, accountId, body: json });
    // A retry after a lost SendMessage response: the same event, a second SQS message (on a FIFO
    // queue, the same deduplication id: SQS accepts it and does not deliver it).
    if (faultHits(faults.producerDuplicateRate, seed, 'producer-duplicate', body.eventId)) {
      outgoing.push({ eventId: body.eventId, accountId, body: json });
      producerDuplicates += 1;
    }
  }
  return { runId, events, messages: outgoing, expectedCents, poison, producerDuplicates };
}

/** Sends one mode's copy of the manifest with SendMessageBatch, retrying entries SQS refuses. */
export async function produce(
  env: ExperimentEnvironment,
  mode: Mode,
  manifest: Manifest,
  onSent: (count: number) => void = () => undefined,
): Promise<void> {
  const queueUrl = env.queueUrl(mode);
  const fifo = isFifoMode(mode);
  // A handful of batches in flight is enough to saturate a local emulator without starving it. A
  // FIFO queue orders a group by arrival: batches in flight at once would arrive in any order, so
  // they go one after the other (each in manifest order).
  await forEachConcurrently(sendBatches(manifest.messages), fifo ? 1 : 8, async (batch) => {
    await sendBatch(env, queueUrl, manifest.runId, batch, fifo);
    onSent(batch.length);
  });
}

/** One SendMessageBatch entry: the body, the run and event attributes, and a FIFO queue's ids. */
export function entryOf(
  runId: string,
  message: OutgoingMessage,
  index: number,
  fifo: boolean,
): SendMessageBatchRequestEntry {
  return {
    Id: String(index),
    MessageBody: message.body,
    MessageAttributes: {
      [RUN_ID_ATTRIBUTE]: { DataType: 'String', StringValue: runId },
      [EVENT_ID_ATTRIBUTE]: { DataType: 'String', StringValue: message.eventId },
    },
    // One group per run and account: its events in order, other accounts in parallel. The event's id
    // as the deduplication id: a re-send within SQS's 5-minute window is accepted and not delivered.
    ...(fifo ? fifoIdsOf(runId, message.accountId, message.eventId) : {}),
  };
}

/** Up to 10 messages per batch, and no more than SQS's payload limit per request. */
export function sendBatches(messages: readonly OutgoingMessage[]): OutgoingMessage[][] {
  // + the two attributes, generously
  return sizedBatches(messages, (message) => Buffer.byteLength(message.body) + 256, SQS_MAX_PAYLOAD_BYTES);
}

async function sendBatch(
  env: ExperimentEnvironment,
  queueUrl: string,
  runId: string,
  batch: readonly OutgoingMessage[],
  fifo: boolean,
): Promise<void> {
  let entries = batch.map((message, index) => entryOf(runId, message, index, fifo));
  for (let attempt = 1; entries.length > 0; attempt += 1) {
    const { Failed = [] } = await env.sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
    );
    if (Failed.length === 0) return;
    if (attempt >= 5) {
      throw new Error(
        `SQS refused ${Failed.length} message(s) 5 times: ${Failed.map((f) => f.Message ?? f.Code).join('; ')}`,
      );
    }
    const failedIds = new Set(Failed.map((failure) => failure.Id));
    if (fifo) assertRetryKeepsOrder(entries, failedIds);
    entries = entries.filter((entry) => failedIds.has(entry.Id));
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
  }
}

/**
 * A FIFO queue orders a group by arrival: resending a refused entry is safe only if no later entry
 * of its group was accepted (the batches go one after the other, so nothing later was sent yet).
 * Otherwise the resend would land behind its successor, a gap the consumer cannot fill: stop instead.
 */
export function assertRetryKeepsOrder(
  entries: readonly SendMessageBatchRequestEntry[],
  failedIds: ReadonlySet<string | undefined>,
): void {
  const refusedGroups = new Set<string | undefined>();
  for (const entry of entries) {
    if (failedIds.has(entry.Id)) refusedGroups.add(entry.MessageGroupId);
    else if (refusedGroups.has(entry.MessageGroupId)) {
      throw new Error(
        `SQS refused an entry of FIFO group ${entry.MessageGroupId} and accepted a later one of the same group: ` +
          'resending it would put it behind its successor. Stopped; run again with a new run id.',
      );
    }
  }
}

import { createHash } from 'node:crypto';
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { chunks } from '../functions/shared/chunks.js';
import { writeManifest } from '../functions/shared/ledger.js';
import type { MessageBody } from '../functions/shared/message.js';
import { RUN_ID_ATTRIBUTE } from '../functions/shared/message.js';
import type { Mode } from '../lib/topology.js';
import { forEachConcurrently } from './concurrently.js';
import type { ExperimentEnvironment } from './environments/environment.js';

export interface Manifest {
  readonly runId: string;
  readonly messages: readonly MessageBody[];
  readonly expectedCents: number;
}

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

/**
 * The producer's manifest: `messages` events over `accounts` accounts, amounts in cents, all
 * derived from the seed. Event ids are stamped here, once per logical event, and stay the same on
 * every re-send: they are the idempotency key.
 */
export function buildManifest(runId: string, seed: string, messages: number, accounts: number): Manifest {
  const random = seededRandom(seed);
  const width = String(Math.max(0, accounts - 1)).length;
  const list: MessageBody[] = [];
  let expectedCents = 0;
  for (let index = 0; index < messages; index += 1) {
    const amountCents = 1 + Math.floor(random() * 10_000);
    const account = Math.floor(random() * accounts);
    list.push({
      eventId: `evt-${String(index).padStart(6, '0')}`,
      runId,
      accountId: `acct-${String(account).padStart(width, '0')}`,
      amountCents,
    });
    expectedCents += amountCents;
  }
  return { runId, messages: list, expectedCents };
}

/** Sends one mode's copy of the manifest with SendMessageBatch, retrying entries SQS refuses. */
export async function produce(
  env: ExperimentEnvironment,
  mode: Mode,
  manifest: Manifest,
  onSent: (count: number) => void = () => undefined,
): Promise<void> {
  const queueUrl = env.queueUrl(mode);
  // A handful of batches in flight is enough to saturate a local emulator without starving it.
  await forEachConcurrently(chunks(manifest.messages, 10), 8, async (chunk) => {
    await sendChunk(env, queueUrl, chunk);
    onSent(chunk.length);
  });
  await writeManifest({ ddb: env.ddb, tableName: env.tableName, mode }, manifest.runId, {
    produced: manifest.messages.length,
    expectedCents: manifest.expectedCents,
  });
}

async function sendChunk(
  env: ExperimentEnvironment,
  queueUrl: string,
  chunk: readonly MessageBody[],
): Promise<void> {
  let entries: SendMessageBatchRequestEntry[] = chunk.map((message, index) => ({
    Id: String(index),
    MessageBody: JSON.stringify(message),
    MessageAttributes: { [RUN_ID_ATTRIBUTE]: { DataType: 'String', StringValue: message.runId } },
  }));
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
    entries = entries.filter((entry) => failedIds.has(entry.Id));
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
  }
}

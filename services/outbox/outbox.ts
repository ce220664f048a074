import { gunzipSync, gzipSync } from 'node:zlib';
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sizedBatches } from '../../contract/chunks.js';
import { TTL_ATTRIBUTE } from '../../contract/ledger-keys.js';
import { EVENT_ID_ATTRIBUTE, fifoIdsOf, RUN_ID_ATTRIBUTE } from '../../contract/message.js';
import { STORAGE } from '../../contract/topology.js';

/**
 * The transactional outbox (docs/design.md): the producing service writes its state change and an
 * outbox item in one TransactWriteItems; a relay reads the outbox table's stream and publishes each
 * new item. The item layout and the publish live here, once, for the embedded relay
 * (harness/run/outbox) and the Lambda relay (services/outbox/relay.ts).
 */

/** One event as the outbox holds it, and as the relay publishes it. */
export interface OutboxMessage {
  readonly runId: string;
  readonly eventId: string;
  /** Its account: the item's partition and, on a FIFO queue, the message group. */
  readonly accountId: string;
  /** The producer's order (the message's index in the run): the item's sort key. */
  readonly position: number;
  /** The SQS body, exactly as the direct producer would send it. */
  readonly body: string;
}

/**
 * Partition key of an outbox item: the run and the account. Per account because a stream keeps
 * order only per partition key (Lambda processes a partition key's records in order, even with a
 * ParallelizationFactor above 1), which is the order a FIFO mode needs; and not one partition per
 * run, which would be a hot key (1,000 writes/s per partition) serialising the whole run.
 */
export const outboxPartitionKey = (runId: string, accountId: string): string =>
  `RUN#${runId}#ACCOUNT#${accountId}`;

/** Sort key: the position, zero-padded so that the items of an account sort in production order. */
export const outboxSortKey = (position: number): string => `POS#${String(position).padStart(10, '0')}`;

/**
 * How long an outbox item is kept: past the stream's 24 h retention a relay can no longer see its
 * insert, so the item is only evidence; two days leave room for a relay that was down a day.
 */
export const OUTBOX_ITEM_TTL_SECONDS = 2 * 24 * 3600;

/**
 * A body this large is stored gzip-compressed (`bodyGzip`): a DynamoDB item holds 400 KB, an SQS
 * message 1 MiB. Larger still, even compressed, it cannot go through the outbox at all.
 */
export const INLINE_BODY_BYTES = 64 * 1024;
export const MAX_STORED_BODY_BYTES = 350 * 1024;

/** A body the outbox cannot hold: it needs a claim check (the body in S3, its key in the item). */
export class OutboxBodyTooLargeError extends Error {
  override readonly name = 'OutboxBodyTooLargeError';
}

function bodyAttribute(message: OutboxMessage): { body: string } | { bodyGzip: Uint8Array } {
  if (Buffer.byteLength(message.body) <= INLINE_BODY_BYTES) return { body: message.body };
  const compressed = gzipSync(message.body);
  if (compressed.byteLength > MAX_STORED_BODY_BYTES) {
    throw new OutboxBodyTooLargeError(
      `event ${message.eventId}: its body is ${compressed.byteLength} bytes even compressed, more than an outbox ` +
        `item may hold (${MAX_STORED_BODY_BYTES}); store it elsewhere (S3) and put its key in the outbox item`,
    );
  }
  return { bodyGzip: compressed };
}

/** The outbox item written inside the producer's transaction (DocumentClient shape). */
export function outboxItem(message: OutboxMessage, nowMs: number = Date.now()): Record<string, unknown> {
  return {
    pk: outboxPartitionKey(message.runId, message.accountId),
    sk: outboxSortKey(message.position),
    runId: message.runId,
    eventId: message.eventId,
    accountId: message.accountId,
    position: message.position,
    ...bodyAttribute(message),
    [TTL_ATTRIBUTE]: Math.floor(nowMs / 1000) + OUTBOX_ITEM_TTL_SECONDS,
  };
}

/** A stream record's NewImage that is not an outbox item: a bug or a foreign writer, never relayed. */
export class MalformedOutboxItemError extends Error {
  override readonly name = 'MalformedOutboxItemError';
}

/** The part of a DynamoDB JSON attribute value an outbox item uses (the SDK's and aws-lambda's types both fit). */
export type ImageValue =
  | { readonly S?: string; readonly N?: string; readonly B?: string | Uint8Array }
  | undefined;

/**
 * The outbox message of a stream record's NewImage (DynamoDB JSON, as both the Streams API and
 * Lambda's DynamoDBStreamEvent carry it). Strict: a missing or mistyped attribute throws.
 */
export function outboxMessageOf(image: Readonly<Record<string, ImageValue>> | undefined): OutboxMessage {
  if (image === undefined) {
    throw new MalformedOutboxItemError(
      'stream record has no NewImage: the outbox table stream must use NEW_IMAGE or NEW_AND_OLD_IMAGES',
    );
  }
  const text = (name: string): string => {
    const value = image[name]?.S;
    if (value === undefined || value === '') {
      throw new MalformedOutboxItemError(`outbox item lacks string attribute ${name}`);
    }
    return value;
  };
  const raw = image.position?.N;
  const position = Number(raw);
  if (raw === undefined || !Number.isSafeInteger(position) || position < 0) {
    throw new MalformedOutboxItemError(`outbox item position must be a whole number, got ${raw ?? 'none'}`);
  }
  return {
    runId: text('runId'),
    eventId: text('eventId'),
    accountId: text('accountId'),
    position,
    body: bodyOf(image),
  };
}

/** `body`, or `bodyGzip`: binary, base64 in Lambda's event and bytes from the Streams API. */
function bodyOf(image: Readonly<Record<string, ImageValue>>): string {
  const inline = image.body?.S;
  if (inline !== undefined) return inline;
  const compressed = image.bodyGzip?.B;
  if (compressed === undefined) {
    throw new MalformedOutboxItemError('outbox item has neither a body (S) nor a bodyGzip (B)');
  }
  const bytes = typeof compressed === 'string' ? Buffer.from(compressed, 'base64') : Buffer.from(compressed);
  try {
    return gunzipSync(bytes).toString('utf8');
  } catch (error) {
    throw new MalformedOutboxItemError(`outbox item bodyGzip is not gzip: ${String(error)}`);
  }
}

/** Where the relay publishes: one queue per mode. */
export interface OutboxTarget {
  readonly name: string;
  readonly queueUrl: string;
  /** FIFO: the lab's group and deduplication id (fifoIdsOf: `<runId>:<accountId>`, `<runId>:<eventId>`). */
  readonly fifo: boolean;
}

/**
 * The SendMessageBatch entry of an outbox message: the same attributes, group and deduplication id
 * as the direct producer's (harness/run/producer.ts), so a consumer cannot tell which
 * producer sent it; a relay re-send after a crash is deduplicated by a FIFO queue within 5 minutes.
 */
export function outboxEntry(message: OutboxMessage, id: string, fifo: boolean): SendMessageBatchRequestEntry {
  return {
    Id: id,
    MessageBody: message.body,
    MessageAttributes: {
      [RUN_ID_ATTRIBUTE]: { DataType: 'String', StringValue: message.runId },
      [EVENT_ID_ATTRIBUTE]: { DataType: 'String', StringValue: message.eventId },
    },
    ...(fifo ? fifoIdsOf(message.runId, message.accountId, message.eventId) : {}),
  };
}

/**
 * Messages before `firstUnpublished` reached every target; that one and those after it may have
 * reached some. The Lambda relay reports its record as the first failure; the rest is retried.
 */
export class PublishError extends Error {
  override readonly name = 'PublishError';
  constructor(
    message: string,
    readonly firstUnpublished: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface PublishOptions {
  /** After each accepted batch: the target and how many messages it took. */
  readonly onSent?: (target: string, count: number) => void;
  /** Attempts per batch for entries SQS refuses. @default 3 */
  readonly attempts?: number;
  readonly retryDelayMs?: number;
}

/**
 * Publishes `messages`, in order, to every target: batch after batch (up to 10 messages and SQS's
 * payload limit), each batch to all targets before the next, so a failure has one clear boundary
 * (PublishError.firstUnpublished). Refused entries are retried; a FIFO target is never sent an
 * entry behind a later one of its group.
 */
export async function publishOutboxMessages(
  sqs: SQSClient,
  targets: readonly OutboxTarget[],
  messages: readonly OutboxMessage[],
  options: PublishOptions = {},
): Promise<void> {
  const batches = sizedBatches(
    messages,
    (message) => Buffer.byteLength(message.body) + 256,
    STORAGE.maxMessageBytes,
  );
  let offset = 0;
  for (const batch of batches) {
    const results = await Promise.allSettled(
      targets.map(async (target) => {
        await sendToTarget(sqs, target, batch, options);
        options.onSent?.(target.name, batch.length);
      }),
    );
    const failures = results.flatMap((result, index) =>
      result.status === 'rejected' ? [{ target: targets[index]?.name, reason: result.reason }] : [],
    );
    if (failures.length > 0) {
      const reasons = failures.map(({ target, reason }) => `${target}: ${errorText(reason)}`).join('; ');
      throw new PublishError(
        `publishing outbox positions ${batch[0]?.position}…${batch.at(-1)?.position} failed (${reasons}); ` +
          'the messages before them reached every queue',
        offset,
        { cause: failures[0]?.reason },
      );
    }
    offset += batch.length;
  }
}

async function sendToTarget(
  sqs: SQSClient,
  target: OutboxTarget,
  batch: readonly OutboxMessage[],
  options: PublishOptions,
): Promise<void> {
  const attempts = options.attempts ?? 3;
  let entries = batch.map((message, index) => outboxEntry(message, String(index), target.fifo));
  for (let attempt = 1; entries.length > 0; attempt += 1) {
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: target.queueUrl, Entries: entries }),
    );
    if (Failed.length === 0) return;
    const failedIds = new Set(Failed.map((failure) => failure.Id));
    const detail = Failed.map((failure) => failure.Message ?? failure.Code).join('; ');
    if (attempt >= attempts) {
      throw new Error(`SQS refused ${Failed.length} message(s) ${attempts} times: ${detail}`);
    }
    if (target.fifo && acceptedBehindRefused(entries, failedIds)) {
      throw new Error(
        `SQS refused an entry of a FIFO group and accepted a later one of the same group (${detail}): ` +
          'resending it would put it behind its successor',
      );
    }
    entries = entries.filter((entry) => failedIds.has(entry.Id));
    await new Promise((resolve) => setTimeout(resolve, (options.retryDelayMs ?? 100) * attempt));
  }
}

function acceptedBehindRefused(
  entries: readonly SendMessageBatchRequestEntry[],
  failedIds: ReadonlySet<string | undefined>,
): boolean {
  const refusedGroups = new Set<string | undefined>();
  for (const entry of entries) {
    if (failedIds.has(entry.Id)) refusedGroups.add(entry.MessageGroupId);
    else if (refusedGroups.has(entry.MessageGroupId)) return true;
  }
  return false;
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

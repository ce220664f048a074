import { createHash } from 'node:crypto';
import { isUtcTimestamp } from '@sqs-delivery-semantics/consumer-cores/event';
import type { SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { InvalidMessageError, InvalidRecordError } from './errors.js';

/**
 * Identifiers become parts of DynamoDB sort keys, where `#` separates segments. Forbidding `#`
 * (and allowing only characters that sort after it) keeps every event's ledger items contiguous
 * and in event-id order, which the verifier's streaming join relies on.
 */
export const IdentifierSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1–128 of A-Z a-z 0-9 . _ : -'),
);

/** Integer cents; the upper bound keeps any realistic sum far inside Number.MAX_SAFE_INTEGER. */
export const MAX_AMOUNT_CENTS = 100_000_000;

const identifier = IdentifierSchema;

export const MessageBodySchema = v.strictObject({
  eventId: identifier,
  runId: identifier,
  accountId: identifier,
  amountCents: v.pipe(
    v.number(),
    v.integer('must be an integer number of cents'),
    v.minValue(1),
    v.maxValue(MAX_AMOUNT_CENTS),
  ),
  /**
   * The event's position in its account's stream (1, 2, 3, … per account), stamped by the producer,
   * the source of truth for order; a re-send keeps it. The verifier counts applications out of it.
   */
  seq: v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1)),
  /**
   * The account's balance after this event (a state event): the running sum of the amounts of the
   * account's valid events up to and including this one, stamped by the producer; state-upsert
   * writes it as the balance. A poison event changes no balance, so its body carries the balance
   * before it. Optional in the schema so that bodies built without it (the benches' own bodies)
   * stay valid for the delta modes; state-upsert fails a body without it (modes/state-upsert.ts).
   */
  balanceAfterCents: v.optional(
    v.pipe(v.number(), v.integer('must be an integer number of cents'), v.minValue(0)),
  ),
  /**
   * When the producer created the event (ISO 8601, UTC): its age, which no SQS attribute gives once
   * a redrive has sent it back as a new message. The consumers that dedupe refuse an event older
   * than their dedupe records remember (modes/kit/age-guard.ts).
   */
  createdAt: v.pipe(
    v.string(),
    v.check(isUtcTimestamp, 'must be a UTC timestamp like 2026-01-31T12:00:00.000Z'),
  ),
});

export type MessageBody = v.InferOutput<typeof MessageBodySchema>;

/** Parses and validates a record's body; throws InvalidMessageError naming the first failing field. */
export function parseMessageBody(body: string): MessageBody {
  const result = readMessageBody(body);
  if (result instanceof InvalidMessageError) throw result;
  return result;
}

/** Like parseMessageBody, but returns the InvalidMessageError instead of throwing it. */
export function readMessageBody(body: string): MessageBody | InvalidMessageError {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return new InvalidMessageError('(body)', 'is not valid JSON');
  }
  const result = v.safeParse(MessageBodySchema, json);
  if (result.success) return result.output;
  const issue = result.issues[0];
  return new InvalidMessageError(v.getDotPath(issue) ?? '(body)', issue.message);
}

/**
 * Identifies what was applied, for telling a redelivery (same payload) from a reused event id
 * (another account or amount). The run and event are the marker's key already.
 */
export function payloadHash(message: Pick<MessageBody, 'accountId' | 'amountCents'>): string {
  return createHash('sha256')
    .update(`${message.accountId}\0${message.amountCents}`)
    .digest('hex')
    .slice(0, 32);
}

/**
 * The FIFO message group and deduplication id the lab's producers (the harness's, the outbox relay)
 * give an event. One group per run and account: an account's events arrive in order, and runs that
 * share a deployed queue never hold each other's accounts back, nor hide each other's messages
 * behind a group's head in its DLQ (the verifier counts what a FIFO DLQ hides per group). The
 * deduplication id is the run's event id: an event id is unique within its run only.
 */
export function fifoIdsOf(
  runId: string,
  accountId: string,
  eventId: string,
): { readonly MessageGroupId: string; readonly MessageDeduplicationId: string } {
  return { MessageGroupId: `${runId}:${accountId}`, MessageDeduplicationId: `${runId}:${eventId}` };
}

/** The account of a FIFO message group of the run (fifoIdsOf), or undefined for another run's group. */
export function accountOfFifoGroup(runId: string, group: string): string | undefined {
  const prefix = `${runId}:`;
  return group.startsWith(prefix) ? group.slice(prefix.length) : undefined;
}

/** Message attributes the producer stamps so that even an unparsable body can be attributed. */
export const RUN_ID_ATTRIBUTE = 'runId';
export const EVENT_ID_ATTRIBUTE = 'eventId';

/**
 * The run and event a message names, read leniently (before, or without, validation): the message
 * attributes first, else the body's fields. Either is undefined when absent or not a valid
 * identifier, e.g. for a poison body sent without attributes. `payload` is the body's account and
 * amount when the body is a valid event.
 */
export function attributionOf(
  body: string | undefined,
  runIdAttribute: string | undefined,
  eventIdAttribute?: string | undefined,
): {
  readonly runId: string | undefined;
  readonly eventId: string | undefined;
  readonly payload: Pick<MessageBody, 'accountId' | 'amountCents'> | undefined;
} {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    parsed = undefined; // not JSON: only the attribute can attribute it
  }
  const field = (name: string): string | undefined => {
    if (typeof parsed !== 'object' || parsed === null || !(name in parsed)) return undefined;
    const value: unknown = (parsed as Record<string, unknown>)[name];
    return v.is(identifier, value) ? value : undefined;
  };
  const attribute = (value: string | undefined) => (v.is(identifier, value) ? value : undefined);
  const valid = v.safeParse(MessageBodySchema, parsed);
  return {
    runId: attribute(runIdAttribute) ?? field('runId'),
    eventId: attribute(eventIdAttribute) ?? field('eventId'),
    payload: valid.success
      ? { accountId: valid.output.accountId, amountCents: valid.output.amountCents }
      : undefined,
  };
}

/** The attribution of a Lambda SQS record (its body and message attributes). */
export function recordAttribution(record: SQSRecord): ReturnType<typeof attributionOf> {
  return attributionOf(
    record.body,
    record.messageAttributes?.[RUN_ID_ATTRIBUTE]?.stringValue,
    record.messageAttributes?.[EVENT_ID_ATTRIBUTE]?.stringValue,
  );
}

/** The run a record belongs to, for counting deliveries before any validation. */
export function runIdOf(record: SQSRecord): string | undefined {
  return recordAttribution(record).runId;
}

/** Lambda always sets ApproximateReceiveCount; a record without it is read, never defaulted. */
export function receiveCountOf(record: SQSRecord): number {
  const raw = record.attributes?.ApproximateReceiveCount;
  const count = Number(raw);
  if (raw === undefined || !Number.isInteger(count) || count < 1) {
    throw new InvalidRecordError(
      `record ${record.messageId} has no valid attributes.ApproximateReceiveCount (${String(raw)}): not an SQS event from Lambda`,
    );
  }
  return count;
}

/**
 * The message attribute a redrive by this project's harness adds to the copy it sends back to the
 * source queue (docs/redrive.md): how often the message was redriven, a String attribute holding a
 * whole number. The body is never touched. SQS's own StartMessageMoveTask keeps attributes
 * unchanged, so on AWS it stays absent (or as it was).
 */
export const REDRIVE_COUNT_ATTRIBUTE = 'redriveCount';

const REDRIVE_COUNT = /^(0|[1-9][0-9]{0,8})$/;

/**
 * A redrive count as an attribute carries it (data type and string value): absent is 0, anything
 * but a String or Number attribute holding a whole number is an InvalidRecordError, never 0.
 */
export function parseRedriveCount(
  attribute:
    | { readonly dataType?: string | undefined; readonly stringValue?: string | undefined }
    | undefined,
  messageId: string | undefined,
): number {
  if (attribute === undefined) return 0;
  const { dataType, stringValue } = attribute;
  if (
    (dataType !== 'String' && dataType !== 'Number') ||
    stringValue === undefined ||
    !REDRIVE_COUNT.test(stringValue)
  ) {
    throw new InvalidRecordError(
      `message ${messageId ?? '(no id)'} has a malformed ${REDRIVE_COUNT_ATTRIBUTE} attribute ` +
        `(${dataType ?? 'no data type'} ${JSON.stringify(stringValue)}): a whole number as a String attribute is expected`,
    );
  }
  return Number(stringValue);
}

/** How often a Lambda SQS record was redriven: 0 without the attribute; a malformed one throws. */
export function redriveCountOf(record: Pick<SQSRecord, 'messageId' | 'messageAttributes'>): number {
  return parseRedriveCount(record.messageAttributes?.[REDRIVE_COUNT_ATTRIBUTE], record.messageId);
}

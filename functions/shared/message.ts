import type { SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { InvalidMessageError } from './errors.js';

/**
 * Identifiers become parts of DynamoDB sort keys, where `#` separates segments. Forbidding `#`
 * keeps every event's ledger items contiguous in key order, which the verifier's streaming count
 * relies on.
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

/** The message attribute the producer stamps so that even an unparsable body can be attributed to its run. */
export const RUN_ID_ATTRIBUTE = 'runId';

/**
 * The run and event a message names, read leniently (before, or without, validation): the `runId`
 * message attribute first, else the body's `runId`; the body's `eventId`. Either is undefined when
 * absent or not a valid identifier, e.g. for a poison body.
 */
export function attributionOf(
  body: string | undefined,
  runIdAttribute: string | undefined,
): { readonly runId: string | undefined; readonly eventId: string | undefined } {
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
  const attribute = v.is(identifier, runIdAttribute) ? runIdAttribute : undefined;
  return { runId: attribute ?? field('runId'), eventId: field('eventId') };
}

/** The run a record belongs to, for counting deliveries before any validation. */
export function runIdOf(record: SQSRecord): string | undefined {
  return attributionOf(record.body, record.messageAttributes?.[RUN_ID_ATTRIBUTE]?.stringValue).runId;
}

export function receiveCountOf(record: SQSRecord): number {
  const count = Number(record.attributes.ApproximateReceiveCount);
  return Number.isInteger(count) && count > 0 ? count : 1;
}

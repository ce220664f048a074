import type { SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { InvalidMessageError } from './errors.js';

/**
 * Identifiers become parts of DynamoDB sort keys, where `#` separates segments. Forbidding `#`
 * keeps every event's ledger items contiguous in key order, which the verifier's streaming count
 * relies on.
 */
const identifier = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1–128 of A-Z a-z 0-9 . _ : -'),
);

/** Integer cents; the upper bound keeps any realistic sum far inside Number.MAX_SAFE_INTEGER. */
export const MAX_AMOUNT_CENTS = 100_000_000;

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
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidMessageError('(body)', 'is not valid JSON');
  }
  const result = v.safeParse(MessageBodySchema, json);
  if (result.success) return result.output;
  const issue = result.issues[0];
  throw new InvalidMessageError(v.getDotPath(issue) ?? '(body)', issue.message);
}

/** The message attribute the producer stamps so that even an unparsable body can be attributed to its run. */
export const RUN_ID_ATTRIBUTE = 'runId';

/**
 * The run a record belongs to, for counting deliveries before any validation: the `runId` message
 * attribute, else the body's `runId` if it reads, else undefined.
 */
export function runIdOf(record: SQSRecord): string | undefined {
  const attribute = record.messageAttributes?.[RUN_ID_ATTRIBUTE]?.stringValue;
  if (attribute !== undefined && v.is(identifier, attribute)) return attribute;
  try {
    const body: unknown = JSON.parse(record.body);
    if (typeof body === 'object' && body !== null && 'runId' in body && v.is(identifier, body.runId)) {
      return body.runId;
    }
  } catch {
    // Not JSON: the record cannot be attributed to a run.
  }
  return undefined;
}

export function receiveCountOf(record: SQSRecord): number {
  const count = Number(record.attributes.ApproximateReceiveCount);
  return Number.isInteger(count) && count > 0 ? count : 1;
}

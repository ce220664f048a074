/** One error class per failure kind, so callers branch on `instanceof`, never on message text. */

// The cores' own: the lab throws the same classes, so one `instanceof` holds on both sides.
export { ConflictingReuseError, TooOldToDedupeError } from '@sqs-delivery-semantics/consumer-cores/errors';

/** Configuration is missing or malformed; thrown at cold start so a bad deploy fails loudly. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * The longest field name or reason a log line repeats: the schema library echoes the received
 * value, and an unknown key's name is part of the field path, each up to the 1 MiB of a body.
 */
const MAX_LOGGED_LENGTH = 200;

function bounded(text: string): string {
  return text.length > MAX_LOGGED_LENGTH
    ? `${text.slice(0, MAX_LOGGED_LENGTH)}… (${text.length - MAX_LOGGED_LENGTH} more characters)`
    : text;
}

/** A message body failed validation. It is never applied. */
export class InvalidMessageError extends Error {
  override readonly name = 'InvalidMessageError';
  readonly field: string;
  readonly reason: string;
  constructor(field: string, reason: string) {
    const [boundedField, boundedReason] = [bounded(field), bounded(reason)];
    super(`invalid message body: ${boundedField}: ${boundedReason}`);
    this.field = boundedField;
    this.reason = boundedReason;
  }
}

/** A record lacks an attribute the event source mapping always sets: not a Lambda SQS event. */
export class InvalidRecordError extends Error {
  override readonly name = 'InvalidRecordError';
}

/** DynamoDB refused or cancelled a ledger write for a reason that is worth retrying. */
export class RetryableWriteError extends Error {
  override readonly name = 'RetryableWriteError';
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`ledger write not applied: ${reason}`, options);
  }
}

/** Narrows an unknown thrown value to something loggable. */
export function describeError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'NonError', message: String(error) };
}

/** The verifier was invoked with input that is not `{ "runId": "..." }`. */
export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
}

/** The verifier found no manifest: the run id is wrong, or the run was never produced here. */
export class RunNotFoundError extends Error {
  override readonly name = 'RunNotFoundError';
}

/** One error class per failure kind, so callers branch on `instanceof`, never on message text. */

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

/**
 * effectively-once found a marker for this event id with another account or amount: the producer
 * reused an event id for a different event. Skipping it as a duplicate would silently drop money;
 * applying it would break the idempotency key. It fails, and ends in the DLQ for a human.
 */
export class ConflictingReuseError extends Error {
  override readonly name = 'ConflictingReuseError';
  constructor(
    readonly eventId: string,
    options?: { cause?: unknown },
  ) {
    super(`event id ${eventId} was already applied with a different account or amount`, options);
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

/**
 * The age guard refused an event: it is older than the consumer's dedupe record can still
 * remember (contract/retention.ts), so a second application could not be recognised. It fails and
 * ends in the DLQ, counted as `tooOldToDedupe`: a person decides, never a silent double credit.
 */
export class TooOldToDedupeError extends Error {
  override readonly name = 'TooOldToDedupeError';
  constructor(
    readonly eventId: string,
    readonly ageSeconds: number,
    readonly maxAgeSeconds: number,
  ) {
    super(
      ageSeconds < 0
        ? `event ${eventId} was created ${-ageSeconds} s in the future (a producer clock ahead?): its age ` +
            'cannot be trusted, refused, not applied (it ends in the DLQ; docs/retention.md)'
        : `event ${eventId} is ${ageSeconds} s old, older than the ${maxAgeSeconds} s its dedupe record is ` +
            'sure to remember: refused, not applied (it ends in the DLQ; docs/retention.md)',
    );
  }
}

/**
 * fifo-versioned: the event's predecessor in its account's stream has not been applied (the stored
 * version is below seq − 1). Applying it would skip a position; it fails, so the FIFO queue delivers
 * it again after its predecessor, or dead-letters it behind a predecessor that was dead-lettered
 * (docs/ordering.md, "The gap policy").
 */
export class SequenceGapError extends Error {
  override readonly name = 'SequenceGapError';
  constructor(
    readonly eventId: string,
    readonly seq: number,
    readonly storedVersion: number,
  ) {
    super(
      `${eventId} is seq ${seq} of its account, but the account is at version ${storedVersion}: ` +
        `seq ${storedVersion + 1} has not been applied yet, so it fails until it has`,
    );
  }
}

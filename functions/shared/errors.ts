/** One error class per failure kind, so callers branch on `instanceof`, never on message text. */

/** Configuration is missing or malformed; thrown at cold start so a bad deploy fails loudly. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** A message body failed validation. It is never applied. */
export class InvalidMessageError extends Error {
  override readonly name = 'InvalidMessageError';
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`invalid message body: ${field}: ${reason}`);
  }
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

/** SQS did not delete some entries of a batch the handler deleted itself. */
export class DeleteFailedError extends Error {
  override readonly name = 'DeleteFailedError';
  constructor(readonly messageIds: readonly string[]) {
    super(`SQS did not delete ${messageIds.length} message(s): ${messageIds.join(', ')}`);
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

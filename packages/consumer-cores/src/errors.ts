/**
 * Every error a consumer core throws extends ConsumerError, so a caller can tell "the consumer
 * refused this record" from a bug with one `instanceof`. Branch on the subclass, never on the text.
 */
export class ConsumerError extends Error {
  override readonly name: string = 'ConsumerError';
}

/** The body is not an event this consumer accepts: not JSON, or a field fails its check. */
export class InvalidEventError extends ConsumerError {
  override readonly name = 'InvalidEventError';
  constructor(
    /** The first failing field as a dot path, or `(body)`. */
    readonly field: string,
    reason: string,
  ) {
    super(`invalid event: ${field} ${reason}`);
  }
}

/** The event id was already applied with another payload: a producer bug, not a redelivery. */
export class ConflictingReuseError extends ConsumerError {
  override readonly name = 'ConflictingReuseError';
  constructor(
    readonly eventId: string,
    options?: ErrorOptions,
  ) {
    super(`event id ${eventId} was already applied with a different payload`, options);
  }
}

/**
 * The event is older than its marker can still remember (or stamped too far in the future), so a
 * duplicate of it could no longer be recognised: refused before any write.
 */
export class TooOldToDedupeError extends ConsumerError {
  override readonly name = 'TooOldToDedupeError';
  constructor(
    readonly eventId: string,
    readonly ageSeconds: number,
    readonly maxAgeSeconds: number,
  ) {
    super(
      ageSeconds < 0
        ? `event ${eventId} is stamped ${-ageSeconds} s in the future: its age cannot be trusted`
        : `event ${eventId} is ${ageSeconds} s old, older than the ${maxAgeSeconds} s its marker remembers`,
    );
  }
}

/** The write did not happen (or may not have): the record must be retried, never counted as applied. */
export class WriteFailedError extends ConsumerError {
  override readonly name = 'WriteFailedError';
  constructor(reason: string, options?: ErrorOptions) {
    super(`write failed, retry the record: ${reason}`, options);
  }
}

/** The writes given for one event break a DynamoDB transaction limit: refused before sending. */
export class TransactionLimitError extends ConsumerError {
  override readonly name = 'TransactionLimitError';
}

/**
 * One of the team's own writes failed its condition (a business refusal, such as insufficient
 * funds): nothing was written. `index` is its place in the writes given. The record fails, unless
 * the core's `onRefused` decides to record the refusal (effectively-once).
 */
export class WriteRefusedError extends ConsumerError {
  override readonly name = 'WriteRefusedError';
  constructor(
    readonly eventId: string,
    readonly index: number,
    /** The item as it was, when the write asked for it (ReturnValuesOnConditionCheckFailure), marshalled. */
    readonly item: Record<string, unknown> | undefined,
    options?: ErrorOptions,
  ) {
    super(
      `event ${eventId}: write ${index} of its writes failed its condition; nothing was written`,
      options,
    );
  }
}

/**
 * A refusal `onRefused` asked to record that the core cannot confirm: the refused write is a Put
 * (it names no key, so its item cannot be checked again). Nothing was written; the record fails, as
 * on 'retry'. Write it as an Update with the same condition.
 */
export class RefusalNotRecordableError extends ConsumerError {
  override readonly name = 'RefusalNotRecordableError';
  constructor(
    readonly eventId: string,
    readonly index: number,
    options?: ErrorOptions,
  ) {
    super(
      `event ${eventId}: write ${index} has no key to check its refusal again (a Put), so it is not recorded; write it as an Update with the same condition`,
      options,
    );
  }
}

/** The marker's key holds an item that is not a marker: another entity shares the key space. */
export class MarkerKeyInUseError extends ConsumerError {
  override readonly name = 'MarkerKeyInUseError';
  constructor(readonly eventId: string) {
    super(
      `event ${eventId}: its marker key holds an item that is not a marker; give markerKey a prefix of its own`,
    );
  }
}

/**
 * How long each thing is kept, in one place: the queues, the DLQs, the dedupe records and the age
 * guard's limit are derived here, and the stack, the handlers and the local runtime read them
 * (docs/retention.md, "The rule"). The facts from AWS's documentation the rule rests on:
 *
 * - A standard queue's DLQ keeps a message's original enqueue timestamp, so a message expires from
 *   the DLQ once its age since the first send passes the DLQ's retention (a FIFO DLQ resets it).
 * - A redrive (StartMessageMoveTask) sends each message back as a new message: a new MessageId and
 *   a new enqueue time, so its retention starts over, and a redrive can be repeated. No queue
 *   setting bounds how old an event can be when it comes back.
 * - DynamoDB's TTL deletes an expired item late (typically within a few days), never early; until
 *   then reads still return it. A dedupe condition that trusts only deletion forgets at an unknown
 *   moment, so the consumers here treat a record past its expiry as absent, as Powertools' own
 *   condition does: a record remembers exactly until its expiry, whenever it is deleted.
 *
 * So only the consumer can keep dedupe exact: it refuses an event older than its dedupe record can
 * still remember (the age guard), and the records must outlive every event the guard accepts.
 */

const DAY_SECONDS = 24 * 3600;

/** How long SQS keeps an unconsumed message in a source queue (4 days, SQS's default). */
export const QUEUE_RETENTION_SECONDS = 4 * DAY_SECONDS;
/** How long SQS keeps a dead-lettered message (14 days, the maximum SQS allows). */
export const DEAD_LETTER_RETENTION_SECONDS = 14 * DAY_SECONDS;
/** The run's evidence (manifest, balances, application records) is kept at least this long. */
export const EVIDENCE_RETENTION_SECONDS = 30 * DAY_SECONDS;
/** The deployed default of `markerRetentionDays`: longer than the DLQ keeps a message. */
export const DEFAULT_MARKER_RETENTION_DAYS = 30;
/**
 * The longest marker retention a deployment may set. The producer writes the run's manifest
 * without knowing the deployment's setting, so it keeps it this long: the verifier's evidence
 * outlives every marker.
 */
export const MAX_MARKER_RETENTION_DAYS = 365;
/**
 * How long the payment provider keeps an idempotency key (Stripe documents "at least 24 hours"): a
 * repeat of a key older than this may charge again, so the charge modes' age guard uses the shorter
 * of this and the marker's retention (modes/families/charge-then-record.ts).
 */
export const PROVIDER_KEY_RETENTION_SECONDS = DAY_SECONDS;
/** How long the producer keeps a run's manifest: as long as the longest marker may live. */
export const MANIFEST_TTL_SECONDS = MAX_MARKER_RETENTION_DAYS * DAY_SECONDS;

export interface Retention {
  /** How long a dedupe record remembers an event (effectively-once's marker, Powertools' record). */
  readonly markerTtlSeconds: number;
  /**
   * The oldest event the age guard accepts, by the producer's `createdAt`: the marker TTL less
   * {@link marginSeconds}.
   */
  readonly maxEventAgeSeconds: number;
  /**
   * What the guard keeps between an event's age and its marker's expiry: the skew between the
   * producer's and the consumer's clocks, and the time from the guard's check to the write (SDK
   * and ledger retries, up to a function timeout). A tenth of the TTL, at least 5 s (the local
   * function timeout is 3 s), at most an hour. Also how far in the future a `createdAt` may be.
   */
  readonly marginSeconds: number;
  /** TTL of the run's other ledger items: 30 days, or the marker TTL if longer. */
  readonly evidenceTtlSeconds: number;
}

/** The shortest marker TTL: the guard's margin of 5 s leaves it 5 s of events to accept. */
export const MIN_MARKER_TTL_SECONDS = 10;

export function retentionOf(markerTtlSeconds: number): Retention {
  if (!(Number.isInteger(markerTtlSeconds) && markerTtlSeconds >= MIN_MARKER_TTL_SECONDS)) {
    throw new RangeError(
      `a marker TTL must be a whole number of seconds, at least ${MIN_MARKER_TTL_SECONDS} (got ${markerTtlSeconds})`,
    );
  }
  const margin = Math.min(3600, Math.max(5, Math.ceil(markerTtlSeconds / 10)));
  return {
    markerTtlSeconds,
    maxEventAgeSeconds: markerTtlSeconds - margin,
    marginSeconds: margin,
    evidenceTtlSeconds: Math.max(EVIDENCE_RETENTION_SECONDS, markerTtlSeconds),
  };
}

export const DEFAULT_RETENTION: Retention = retentionOf(DEFAULT_MARKER_RETENTION_DAYS * DAY_SECONDS);

/**
 * What a deployment's retention must satisfy, as sentences (empty when it holds). The guard must
 * accept every message still within its source queue's retention — a backlog is not a redrive — so
 * the marker must outlive the queue's retention plus the guard's margin; and a DLQ must keep a
 * message at least as long as its source queue did, since it keeps the original enqueue time.
 */
export function retentionRuleViolations(
  retention: Retention,
  queues: { readonly queueRetentionSeconds: number; readonly deadLetterRetentionSeconds: number } = {
    queueRetentionSeconds: QUEUE_RETENTION_SECONDS,
    deadLetterRetentionSeconds: DEAD_LETTER_RETENTION_SECONDS,
  },
): string[] {
  const violations: string[] = [];
  if (retention.maxEventAgeSeconds < queues.queueRetentionSeconds) {
    const neededDays = Math.ceil(
      (queues.queueRetentionSeconds + (retention.markerTtlSeconds - retention.maxEventAgeSeconds)) /
        DAY_SECONDS,
    );
    violations.push(
      `the dedupe records would remember an event ${days(retention.markerTtlSeconds)}, so the age guard would ` +
        `refuse events older than ${days(retention.maxEventAgeSeconds)}, while a source queue keeps a message ` +
        `${days(queues.queueRetentionSeconds)}: a backlog would be dead-lettered. Keep markers at least ` +
        `${neededDays} days`,
    );
  }
  if (queues.deadLetterRetentionSeconds < queues.queueRetentionSeconds) {
    violations.push(
      `a DLQ keeps a message ${days(queues.deadLetterRetentionSeconds)}, less than its source queue ` +
        `(${days(queues.queueRetentionSeconds)}); a standard DLQ keeps the original enqueue time, so messages ` +
        'would expire on arrival',
    );
  }
  return violations;
}

function days(seconds: number): string {
  const value = seconds / DAY_SECONDS;
  return Number.isInteger(value) ? `${value} days` : `${value.toFixed(2)} days (${seconds} s)`;
}

import type { Mode } from './topology.js';

/**
 * Single-table layout of the ledger. Every item a mode's consumer writes for a run shares one
 * partition key (its role may write nothing else: IAM `dynamodb:LeadingKeys`), so the verifier
 * reads a run per mode with paginated `Query` calls and runs never touch each other:
 *
 *   pk = RUN#<runId>#MODE#<mode>
 *   sk = STAT#<counter>                             deliveries, crashes, suppressed duplicates, …
 *        BAL#<accountId>                            the account balance (state-upsert, fifo-versioned: and its version, the seq
 *                                                   written)
 *        APP#<eventId>                              effectively-once: the processed marker; entry-upsert: its entry;
 *                                                   state-upsert: the event's record (its state written or superseded)
 *        APP#<eventId>#<receiveCount>#<messageId>#<requestId>#<position>   the charge and Powertools modes: one per application
 *        CRASH#<key>#<receiveCount>                 an injected crash (key = eventId, or the messageId of an unparsable body)
 *        OLD#<eventId>                              the age guard refused the event (too old to dedupe)
 *
 *   pk = RUN#<runId>#MANIFEST                       written by the producer only
 *   sk = EVT#<eventId>                              one per event it sent: account, amount, poison kind
 *        SUMMARY                                    counts, expected cents, the modes it produced to
 *
 * Identifiers never contain `#` and every identifier character sorts after it (see message.ts),
 * so one event's application records are adjacent, and manifest and application records come in
 * the same event-id order: the verifier joins them as streams.
 */
export const partitionKey = (runId: string, mode: Mode): string => `RUN#${runId}#MODE#${mode}`;
export const manifestPartitionKey = (runId: string): string => `RUN#${runId}#MANIFEST`;

export const SK = {
  manifestSummary: 'SUMMARY',
  manifestEventPrefix: 'EVT#',
  statPrefix: 'STAT#',
  balancePrefix: 'BAL#',
  applicationPrefix: 'APP#',
  crashPrefix: 'CRASH#',
  refusalPrefix: 'OLD#',
} as const;

export const COUNTERS = {
  deliveries: 'deliveries',
  crashes: 'crashes',
  suppressedDuplicates: 'suppressedDuplicates',
  /** Transactions cancelled by a conflict or throttling and tried again (hot keys show here). */
  retriedCancellations: 'retriedCancellations',
  /** state-upsert: events whose state was not written because a newer state was stored already. */
  superseded: 'superseded',
  /** Charge modes: requests whose response the payment provider lost on purpose (the injected fault). */
  providerResponsesLost: 'providerResponsesLost',
} as const;

export type Counter = (typeof COUNTERS)[keyof typeof COUNTERS];

export const counterKey = (counter: Counter): string => `${SK.statPrefix}${counter}`;
export const balanceKey = (accountId: string): string => `${SK.balancePrefix}${accountId}`;
export const markerKey = (eventId: string): string => `${SK.applicationPrefix}${eventId}`;
/** One item per crash point hit: a second crash of the same delivery (a re-sent copy) adds to its count. */
export const crashKey = (key: string, receiveCount: number): string =>
  `${SK.crashPrefix}${key}#${receiveCount}`;
export const refusalKey = (eventId: string): string => `${SK.refusalPrefix}${eventId}`;
export const manifestEventKey = (eventId: string): string => `${SK.manifestEventPrefix}${eventId}`;

export interface Delivery {
  readonly messageId: string;
  readonly receiveCount: number;
  readonly requestId: string;
  /** The record's index in the invocation's batch: keeps two copies of a message in one batch apart. */
  readonly position: number;
}

export const applicationKey = (eventId: string, delivery: Delivery): string =>
  `${markerKey(eventId)}#${delivery.receiveCount}#${delivery.messageId}#${delivery.requestId}#${delivery.position}`;

/** DynamoDB TTL attribute (epoch seconds) carried by every ledger item: the run's evidence. */
export const TTL_ATTRIBUTE = 'expiresAt';

/**
 * A processed marker's own expiry (epoch seconds): until then it makes a redelivery a duplicate;
 * after it the event is forgotten, even while the item stays as evidence (contract/retention.ts).
 */
export const DEDUPE_UNTIL_ATTRIBUTE = 'dedupeUntil';

/**
 * at-least-once and at-most-once credit with ONE UpdateItem, as a team ships them: no transaction,
 * no record item, so the lab adds each application to the balance item it credits, in that same
 * write: the attribute `APP#<eventId>`, a list with one entry per application. A credit applied
 * twice (a redelivery, or a lost response the SDK sent again) appends twice, so the count is exact.
 */
export const appliedOnBalanceAttribute = (eventId: string): string => `${SK.applicationPrefix}${eventId}`;

export interface AppliedOnBalance {
  readonly receiveCount: number;
  readonly appliedAtMs: number;
  readonly amountCents: number;
}

/** One application as the list holds it: `<receiveCount>:<appliedAtMs>:<amountCents>`, a few bytes. */
export const appliedOnBalanceEntry = (entry: AppliedOnBalance): string =>
  `${entry.receiveCount}:${entry.appliedAtMs}:${entry.amountCents}`;

export function parseAppliedOnBalance(entry: unknown): AppliedOnBalance {
  const match = typeof entry === 'string' ? /^([0-9]+):([0-9]+):(-?[0-9]+)$/.exec(entry) : null;
  if (match === null) throw new TypeError(`not an application entry: ${JSON.stringify(entry)}`);
  return { receiveCount: Number(match[1]), appliedAtMs: Number(match[2]), amountCents: Number(match[3]) };
}

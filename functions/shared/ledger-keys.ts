import type { Mode } from '../../lib/topology.js';

/**
 * Single-table layout of the ledger. Every item of a run's mode shares one partition key, so the
 * verifier reads a run per mode with paginated `Query` calls and runs never touch each other:
 *
 *   pk = RUN#<runId>#MODE#<mode>
 *   sk = MANIFEST                                   what the producer sent (count, cents)
 *        STAT#<counter>                             deliveries, crashes, suppressed duplicates
 *        BAL#<accountId>                            the account balance
 *        APP#<eventId>                              effectively-once: the processed marker
 *        APP#<eventId>#<receiveCount>#<messageId>#<requestId>#<position>   other modes: one per application
 *
 * Identifiers never contain `#` (see message.ts), so all of one event's application records are
 * adjacent in sort-key order and can be counted while streaming.
 */
export const partitionKey = (runId: string, mode: Mode): string => `RUN#${runId}#MODE#${mode}`;

export const SK = {
  manifest: 'MANIFEST',
  statPrefix: 'STAT#',
  balancePrefix: 'BAL#',
  applicationPrefix: 'APP#',
} as const;

export const COUNTERS = {
  deliveries: 'deliveries',
  crashes: 'crashes',
  suppressedDuplicates: 'suppressedDuplicates',
} as const;

export type Counter = (typeof COUNTERS)[keyof typeof COUNTERS];

export const counterKey = (counter: Counter): string => `${SK.statPrefix}${counter}`;
export const balanceKey = (accountId: string): string => `${SK.balancePrefix}${accountId}`;
export const markerKey = (eventId: string): string => `${SK.applicationPrefix}${eventId}`;

export interface Delivery {
  readonly messageId: string;
  readonly receiveCount: number;
  readonly requestId: string;
  /** The record's index in the invocation's batch: keeps two copies of a message in one batch apart. */
  readonly position: number;
}

export const applicationKey = (eventId: string, delivery: Delivery): string =>
  `${markerKey(eventId)}#${delivery.receiveCount}#${delivery.messageId}#${delivery.requestId}#${delivery.position}`;

/** DynamoDB TTL attribute (epoch seconds) carried by every ledger item. */
export const TTL_ATTRIBUTE = 'expiresAt';

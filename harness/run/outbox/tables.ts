import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createPkSkTable } from '../../../contract/pk-sk-table.js';

/**
 * The producing service's two tables, as stack/outbox-relay.ts deploys them. Two, not one: the
 * outbox table's stream then carries outbox items only (the relay reads no state changes it must
 * discard), and the state table needs no stream.
 */
export const OUTBOX_TABLES = {
  /** The service's own state: an account's pending balance, per run and account. */
  state: 'producer-state',
  /** Outbox items, one per event; stream NEW_IMAGE. */
  outbox: 'outbox',
} as const;

export type OutboxTableNames = { readonly state: string; readonly outbox: string };

/** The producer's own state change for one event, keyed by run and account. */
export const stateKey = (runId: string, accountId: string) => ({
  pk: `RUN#${runId}#ACCOUNT#${accountId}`,
  sk: 'PENDING',
});

/** The relay's checkpoint of one shard of one run (in the state table: the outbox stream stays outbox-only). */
export const checkpointKey = (runId: string, shardId: string) => ({
  pk: `RUN#${runId}#RELAY`,
  sk: `SHARD#${shardId}`,
});

/** Creates both tables unless they exist (several runs share one emulator; each keys its own items). */
export async function ensureOutboxTables(
  dynamodb: DynamoDBClient,
  names: OutboxTableNames = OUTBOX_TABLES,
): Promise<void> {
  await Promise.all([
    createPkSkTable(dynamodb, names.state, { ifAbsent: true }),
    createPkSkTable(dynamodb, names.outbox, { ifAbsent: true, stream: 'NEW_IMAGE' }),
  ]);
}

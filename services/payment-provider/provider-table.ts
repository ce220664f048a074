/**
 * The stand-in payment provider's table, and what every part of the provider is given.
 *
 * Table layout (pk/sk, TTL on {@link PROVIDER_TTL_ATTRIBUTE}):
 *
 *   pk = KEY#<idempotency key>   sk = KEY                 the key: fingerprint, state, lease, saved response
 *   pk = CHARGES#<runId>         sk = CHARGE#<chargeId>   a charge the provider executed (its own ledger)
 *
 * One partition per run holds the run's charges, so the verifier lists them with one paginated
 * Query: the stand-in for Stripe's search by metadata.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** How long a request may hold its key before a repeat may take it over (the provider died mid-request). */
export const DEFAULT_LEASE_SECONDS = 10;
/** The TTL attribute of both item kinds (epoch seconds); the construct's table names the same. */
export const PROVIDER_TTL_ATTRIBUTE = 'expiresAt';

export const keyItemKey = (idempotencyKey: string) => ({ pk: `KEY#${idempotencyKey}`, sk: 'KEY' });
export const chargesPartition = (runId: string): string => `CHARGES#${runId}`;
export const CHARGE_SK_PREFIX = 'CHARGE#';

/** What the provider needs: its table, and a clock tests can move. */
export interface PaymentProvider {
  readonly ddb: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Epoch milliseconds. @default Date.now */
  readonly now?: () => number;
  /** @default {@link DEFAULT_LEASE_SECONDS} */
  readonly leaseSeconds?: number;
}

export const nowOf = (provider: PaymentProvider): number => provider.now?.() ?? Date.now();

/** The stand-in provider's own ledger: the charges it executed, one partition per run, for the verifier. */
import { type DynamoDBDocumentClient, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { ValidRequest } from './charge-request.js';
import {
  CHARGE_SK_PREFIX,
  chargesPartition,
  type PaymentProvider,
  PROVIDER_TTL_ATTRIBUTE,
} from './provider-table.js';

/** How long an executed charge stays listable for the verifier. */
export const CHARGE_RETENTION_SECONDS = 30 * 24 * 3600;

/** A charge as the verifier reads it. */
export interface ChargeRecord {
  readonly chargeId: string;
  readonly account: string;
  readonly amountCents: number;
  readonly currency: string;
  readonly runId: string;
  readonly mode: string;
  readonly eventId: string;
  readonly idempotencyKey?: string;
  /** ISO 8601, UTC. */
  readonly createdAt: string;
}

/** The ledger item of a charge executed at `now` (epoch ms), `created` its epoch seconds. */
export function chargeItem(
  chargeId: string,
  request: ValidRequest,
  idempotencyKey: string | undefined,
  now: number,
  created: number,
): Record<string, unknown> {
  const { account, amountCents, currency, metadata } = request;
  return {
    pk: chargesPartition(metadata.runId),
    sk: `${CHARGE_SK_PREFIX}${chargeId}`,
    chargeId,
    account,
    amountCents,
    currency,
    runId: metadata.runId,
    mode: metadata.mode,
    eventId: metadata.eventId,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    createdAt: new Date(now).toISOString(),
    [PROVIDER_TTL_ATTRIBUTE]: created + CHARGE_RETENTION_SECONDS,
  };
}

export async function putCharge(provider: PaymentProvider, charge: Record<string, unknown>): Promise<void> {
  await provider.ddb.send(new PutCommand({ TableName: provider.tableName, Item: charge }));
}

/** Every charge the provider executed for a run (paginated Query of the run's partition). */
export async function* listCharges(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  runId: string,
): AsyncGenerator<ChargeRecord> {
  const pages = paginateQuery(
    { client: ddb },
    {
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': chargesPartition(runId), ':prefix': CHARGE_SK_PREFIX },
      ConsistentRead: true,
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) yield chargeRecordOf(item);
  }
}

function chargeRecordOf(item: Record<string, unknown>): ChargeRecord {
  const text = (name: string): string => {
    const value = item[name];
    if (typeof value !== 'string') throw new Error(`charge item ${String(item.sk)} has no string ${name}`);
    return value;
  };
  const amountCents = item.amountCents;
  if (typeof amountCents !== 'number') throw new Error(`charge item ${String(item.sk)} has no amountCents`);
  return {
    chargeId: text('chargeId'),
    account: text('account'),
    amountCents,
    currency: text('currency'),
    runId: text('runId'),
    mode: text('mode'),
    eventId: text('eventId'),
    ...(typeof item.idempotencyKey === 'string' ? { idempotencyKey: item.idempotencyKey } : {}),
    createdAt: text('createdAt'),
  };
}

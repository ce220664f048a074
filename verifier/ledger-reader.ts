import { type DynamoDBDocumentClient, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { COUNTERS, type Counter, partitionKey, SK } from '../contract/ledger-keys.js';
import type { Mode } from '../contract/topology.js';
import type { CrashRecord } from './event-details.js';

export interface LedgerReader {
  readonly ddb: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** Pages through one run's items of one kind (sort-key prefix) in a mode's partition, in sort-key order. */
export function queryPrefix(
  reader: LedgerReader,
  runId: string,
  mode: Mode,
  prefix: string,
  projection: readonly string[],
): AsyncGenerator<Record<string, unknown>> {
  return queryPartition(reader, partitionKey(runId, mode), prefix, projection);
}

/** Pages through the items of a partition whose sort key begins with `prefix`, one page at a time. */
export async function* queryPartition(
  reader: LedgerReader,
  pk: string,
  prefix: string,
  projection: readonly string[],
): AsyncGenerator<Record<string, unknown>> {
  const names = Object.fromEntries(projection.map((attribute, index) => [`#p${index}`, attribute]));
  const pages = paginateQuery(
    { client: reader.ddb, pageSize: 1000 },
    {
      TableName: reader.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
      // No projection: every attribute (the applications on a balance item are named per event).
      ...(projection.length > 0
        ? { ExpressionAttributeNames: names, ProjectionExpression: Object.keys(names).join(', ') }
        : {}),
      ConsistentRead: true,
    },
  );
  for await (const page of pages) yield* page.Items ?? [];
}

export async function readCounters(
  reader: LedgerReader,
  runId: string,
  mode: Mode,
): Promise<Record<Counter, number>> {
  const counters = Object.fromEntries(Object.values(COUNTERS).map((name) => [name, 0])) as Record<
    Counter,
    number
  >;
  for await (const item of queryPrefix(reader, runId, mode, SK.statPrefix, ['sk', 'count'])) {
    const name = String(item.sk).slice(SK.statPrefix.length);
    if (Object.values(COUNTERS).includes(name as Counter))
      counters[name as Counter] = numberAttribute(item, 'count');
  }
  return counters;
}

/** The sum of the mode's balance items (one per account). */
export async function readBalances(
  reader: LedgerReader,
  runId: string,
  mode: Mode,
): Promise<{ readonly cents: number }> {
  let cents = 0;
  for await (const item of queryPrefix(reader, runId, mode, SK.balancePrefix, ['balanceCents'])) {
    cents += numberAttribute(item, 'balanceCents');
  }
  return { cents };
}

export function numberAttribute(item: Record<string, unknown>, name: string): number {
  const value = item[name];
  if (typeof value !== 'number')
    throw new TypeError(`ledger item attribute ${name} is not a number: ${String(value)}`);
  return value;
}

/** The run's crash items of one mode (few: one per injected crash), in key order. */
export async function readCrashes(reader: LedgerReader, runId: string, mode: Mode): Promise<CrashRecord[]> {
  const crashes: CrashRecord[] = [];
  for await (const item of queryPrefix(reader, runId, mode, SK.crashPrefix, [
    'key',
    'receiveCount',
    'crashedAt',
    'crashes',
  ])) {
    crashes.push({
      key: String(item.key),
      receiveCount: numberAttribute(item, 'receiveCount'),
      crashedAtMs: timeAttribute(item, 'crashedAt'),
      crashes: numberAttribute(item, 'crashes'),
    });
  }
  return crashes;
}

/** An ISO 8601 timestamp attribute, as epoch ms. */
export function timeAttribute(item: Record<string, unknown>, name: string): number {
  const value = item[name];
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw new TypeError(`ledger item attribute ${name} is not a timestamp: ${String(value)}`);
  return ms;
}

/** Events the age guard refused (one item per event, however often): the outcome's `tooOldToDedupe`. */
export async function countRefusals(reader: LedgerReader, runId: string, mode: Mode): Promise<number> {
  let refused = 0;
  for await (const _ of queryPrefix(reader, runId, mode, SK.refusalPrefix, ['sk'])) refused += 1;
  return refused;
}

import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { CellEnvironment } from './execution-environment.js';
import type { Scenario } from './scenario.js';

/** A cell's tables, and how the mapping's first round batches its events. */

/** The tables of one cell, seeded; the stream of each that has one. */
export async function createTables(
  env: CellEnvironment,
  scenario: Scenario,
  tables: Record<string, string>,
): Promise<Record<string, string>> {
  const streams: Record<string, string> = {};
  for (const [name, definition] of Object.entries(scenario.tables ?? {})) {
    const { TableDescription } = await env.dynamodb.send(
      new CreateTableCommand({
        ...(definition.ProvisionedThroughput === undefined
          ? { BillingMode: 'PAY_PER_REQUEST' as const }
          : {}),
        ...definition,
        TableName: tables[name],
      }),
    );
    if (TableDescription?.LatestStreamArn !== undefined) streams[name] = TableDescription.LatestStreamArn;
  }
  for (const [name, items] of Object.entries(scenario.seed ?? {})) {
    const table = tables[name];
    if (table === undefined) {
      throw new TypeError(
        `seed.${name}: no such table in the scenario (${Object.keys(tables).join(', ') || 'none'})`,
      );
    }
    for (const item of items ?? []) await env.ddb.send(new PutCommand({ TableName: table, Item: item }));
  }
  return streams;
}

/** For each event's position, the index of the batch the scenario puts it in. */
export function batchIndexes(
  events: number,
  sizes: readonly number[] | undefined,
  batchSize: number,
): number[] {
  const indexes: number[] = [];
  const plan = sizes ?? [];
  let batch = 0;
  let left = plan[0] ?? batchSize;
  for (let position = 0; position < events; position += 1) {
    if (left === 0) {
      batch += 1;
      left = plan[batch] ?? batchSize;
    }
    indexes.push(batch);
    left -= 1;
  }
  return indexes;
}

export function groupBy<T>(items: readonly T[], key: (item: T) => number): T[][] {
  const groups = new Map<number, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([, group]) => group);
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

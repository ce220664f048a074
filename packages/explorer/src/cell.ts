import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import {
  type CellEnvironment,
  describe,
  executionEnvironment,
  lambdaContext,
  preview,
} from './execution-environment.js';
import { readChanges, readDeadLetters, scanTable } from './final-state.js';
import { Identifiers } from './identifiers.js';
import { Invocation } from './invocation.js';
import { recordsToDelete, toSqsRecord } from './mapping.js';
import { createCellQueues, deleteRecords, receiveAll, releaseAll, sendEvents } from './queues.js';
import type { CellContext, DeliveryRecord, FinalState, Scenario, Verdict } from './scenario.js';
import type { Fault, PlannedFault } from './steps.js';

export interface CellRun {
  readonly cell: CellContext;
  readonly deliveries: readonly DeliveryRecord[];
  /** A delivery ran into the function timeout. */
  readonly timedOut: boolean;
  readonly violations: readonly string[];
  readonly summary?: string;
  readonly tone?: 'exact' | 'held';
  readonly detail?: unknown;
}

export const DEFAULT_FUNCTION_TIMEOUT_MS = 2_000;

/** The queue settings with their defaults. */
function queueOf(scenario: Scenario) {
  return {
    fifo: scenario.queue?.fifo ?? false,
    maxReceiveCount: scenario.queue?.maxReceiveCount ?? 3,
    batchSize: scenario.queue?.batchSize ?? 10,
    reportBatchItemFailures: scenario.queue?.reportBatchItemFailures ?? true,
  };
}

/**
 * One cell: the scenario on resources of its own (its tables, seeded; its queue and DLQ), its
 * events sent, then drained as Lambda's mapping drains a queue, with the planned faults: each
 * round delivers what is visible, batch after batch, one invocation at a time; what was not
 * deleted comes back after the last invocation's deadline at receiveCount + 1, until SQS moves it
 * to the DLQ. Then the invariant reads the final state. Whatever the handler does (throws, returns
 * garbage, never returns, writes what the invariant cannot read), the cell has an outcome.
 */
export async function runCell(
  env: CellEnvironment,
  scenario: Scenario,
  plan: readonly PlannedFault[],
): Promise<CellRun> {
  // Named after nothing of the scenario's: its events' ids must not be found in its tables' names.
  const id = `cell-${randomUUID().slice(0, 12)}`;
  const settings = queueOf(scenario);
  const timeoutMs = scenario.functionTimeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS;
  const tables = Object.fromEntries(
    Object.keys(scenario.tables ?? {}).map((name) => [name, `${id}-${name}`]),
  );
  const streams = await createTables(env, scenario, tables);
  const queues = await createCellQueues(env.sqs, id, settings);
  const cell: CellContext = {
    id,
    tables,
    queueUrl: queues.queueUrl,
    deadLetterQueueUrl: queues.deadLetterQueueUrl,
    region: env.region,
    endpoints: env.endpoints,
    credentials: env.credentials,
  };
  const events = typeof scenario.events === 'function' ? scenario.events(cell) : scenario.events;
  await scenario.setup?.(cell, events);
  const messageIndex = await sendEvents(env.sqs, queues.queueUrl, events, settings.fifo);
  const eventOfMessage = (messageId: string) => events[messageIndex.get(messageId) ?? -1]?.id;
  const identifiers = new Identifiers(
    events.map((event) => ({ id: event.id, aliases: scenario.aliases?.(event, cell) ?? [] })),
  );
  const firstBatches = batchIndexes(events.length, scenario.batches, settings.batchSize);
  const deliveries: DeliveryRecord[] = [];
  let environment = await executionEnvironment(env, scenario, cell);
  try {
    for (let round = 1; round <= settings.maxReceiveCount + 2; round += 1) {
      const messages = await receiveAll(env.sqs, queues.queueUrl);
      if (messages.length === 0) break;
      const order = (record: SQSRecord) => messageIndex.get(record.messageId) ?? Number.MAX_SAFE_INTEGER;
      const records = messages
        .map((message) => toSqsRecord(message, queues.queueArn, env.region))
        .sort((a, b) => order(a) - order(b));
      identifiers.add(records, (record) => eventOfMessage(record.messageId));
      // The first round as the scenario batches it; a redelivery with the batch it came in.
      const batches = groupBy(records, (record) => firstBatches[order(record)] ?? 0).flatMap((batch) =>
        chunk(batch, settings.batchSize),
      );
      const remaining: SQSRecord[] = [];
      /** FIFO: a group whose message was not deleted holds its later messages back (AWS: in order, per group). */
      const heldGroups = new Set<string>();
      let lastDeadline = Date.now();
      for (const all of batches) {
        const batch = all.filter((record) => !heldGroups.has(groupOf(record)));
        remaining.push(...all.filter((record) => heldGroups.has(groupOf(record))));
        if (batch.length === 0) continue;
        const delivery = deliveries.length + 1;
        const faults = new Map<string, Fault>(
          plan.filter((fault) => fault.delivery === delivery).map((fault) => [fault.step, fault.fault]),
        );
        const invocation = new Invocation(delivery, faults, (text) => identifiers.eventOf(text, [id]));
        const deadline = Date.now() + timeoutMs;
        lastDeadline = deadline;
        const handler = environment.handler;
        const result = await invocation.run(
          // A copy: what the handler does to its event (shift its records) is not the mapping's business.
          async () =>
            handler(
              { Records: structuredClone(batch) },
              lambdaContext(scenario.name, deadline, timeoutMs, env.region),
            ),
          deadline,
        );
        const acknowledgement = result.kind === 'returned' ? invocation.acknowledge() : undefined;
        let deleted: SQSRecord[] = [];
        let error: string | undefined = result.kind === 'threw' ? describe(result.error) : undefined;
        if (result.kind === 'returned' && acknowledgement === 'delivered') {
          const answer = recordsToDelete(batch, result.value, settings.reportBatchItemFailures);
          if (answer.failedWholeBatch) {
            error = `returned ${preview(result.value)}: not a batch response Lambda reads, so the whole batch failed`;
          }
          deleted = await deleteRecords(env.sqs, queues.queueUrl, answer.delete);
        }
        const kept = batch.filter((record) => !deleted.includes(record));
        const acknowledged = acknowledgement === 'delivered';
        deliveries.push({
          delivery,
          receiveCount: Math.max(...batch.map((record) => Number(record.attributes.ApproximateReceiveCount))),
          events: batch.map((record) => eventOfMessage(record.messageId) ?? '-'),
          ended: acknowledgement === 'killed' ? 'killed' : result.kind,
          acknowledged,
          ...(acknowledged && kept.length > 0
            ? { failed: kept.map((record) => eventOfMessage(record.messageId) ?? '-') }
            : {}),
          ...(error !== undefined ? { error } : {}),
          trace: invocation.trace,
        });
        if (result.kind === 'killed' || result.kind === 'timed-out' || acknowledgement === 'killed') {
          // Lambda replaces an execution environment that died: new clients, a new handler.
          environment.destroy();
          environment = await executionEnvironment(env, scenario, cell);
        }
        remaining.push(...kept);
        if (settings.fifo) for (const record of kept) heldGroups.add(groupOf(record));
      }
      if (remaining.length === 0) continue;
      // The visibility timeout: never before the last invocation's deadline.
      await sleepUntil(lastDeadline + 50);
      await releaseAll(env.sqs, queues.queueUrl, remaining);
    }
  } finally {
    environment.destroy();
  }
  const final: FinalState = {
    events,
    tables: Object.fromEntries(
      await Promise.all(
        Object.entries(tables).map(async ([name, table]) => [name, await scanTable(env.ddb, table)] as const),
      ),
    ),
    changes: Object.fromEntries(
      await Promise.all(
        Object.entries(streams).map(
          async ([name, arn]) => [name, await readChanges(env.dynamodb, arn)] as const,
        ),
      ),
    ),
    deadLetters: await readDeadLetters(
      env.sqs,
      queues.deadLetterQueueUrl,
      (message) => eventOfMessage(message.MessageId ?? '') ?? identifiers.eventOf(message.Body ?? ''),
    ),
    cell,
    deliveries,
  };
  const verdict = await judge(scenario, final);
  // The cell's own resources, gone once judged: hundreds of cells on one DynamoDB Local and fauxqs.
  await Promise.allSettled([
    ...Object.values(tables).map((table) => env.dynamodb.send(new DeleteTableCommand({ TableName: table }))),
    ...[queues.queueUrl, queues.deadLetterQueueUrl].map((url) =>
      env.sqs.send(new DeleteQueueCommand({ QueueUrl: url })),
    ),
  ]);
  return {
    cell,
    deliveries,
    timedOut: deliveries.some((each) => each.ended === 'timed-out'),
    ...verdict,
  };
}

/** The invariant's verdict, in its long form; an invariant that throws is a violation, not a crash. */
async function judge(scenario: Scenario, final: FinalState) {
  let verdict: Verdict;
  try {
    verdict = await scenario.invariant(final);
  } catch (error) {
    return { violations: [`the invariant could not read the final state: ${describe(error)}`] };
  }
  return Array.isArray(verdict)
    ? { violations: verdict as readonly string[] }
    : (verdict as Exclude<Verdict, readonly string[]>);
}

/** The tables of one cell, seeded; the stream of each that has one. */
async function createTables(
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
function batchIndexes(events: number, sizes: readonly number[] | undefined, batchSize: number): number[] {
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

function groupBy<T>(items: readonly T[], key: (item: T) => number): T[][] {
  const groups = new Map<number, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([, group]) => group);
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

function groupOf(record: SQSRecord): string {
  return record.attributes.MessageGroupId ?? '';
}

async function sleepUntil(time: number): Promise<void> {
  const wait = time - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

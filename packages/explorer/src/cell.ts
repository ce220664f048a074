import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { batchIndexes, chunk, createTables, groupBy } from './cell-resources.js';
import {
  type CellEnvironment,
  describe,
  type ExecutionEnvironment,
  executionEnvironment,
  lambdaContext,
  preview,
} from './execution-environment.js';
import { readChanges, readDeadLetters, scanTable } from './final-state.js';
import { Identifiers } from './identifiers.js';
import { Invocation } from './invocation.js';
import { recordsToDelete, toSqsRecord } from './mapping.js';
import { createCellQueues, deleteRecords, receiveAll, releaseAll, sendEvents } from './queues.js';
import type {
  CellContext,
  DeliveryRecord,
  FinalState,
  Scenario,
  ScenarioEvent,
  Verdict,
} from './scenario.js';
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
  const session = await CellSession.open(env, scenario);
  try {
    await session.drain(plan);
  } finally {
    session.environment.destroy();
  }
  return session.close();
}

/**
 * The time a drain runs on: the wall clock, or an interleaving's logical clock (whose wait for the
 * visibility timeout moves the clock instead of sleeping).
 */
export interface CellTime {
  now(): number;
  waitUntil(time: number): Promise<void>;
  /** The invocations' clock, when it is not the wall clock. */
  readonly clock?: () => number;
}

const WALL_TIME: CellTime = { now: () => Date.now(), waitUntil: sleepUntil };

/** What an invocation came to: returned, threw, killed or timed out. */
type InvocationResult = Awaited<ReturnType<Invocation['run']>>;

/**
 * A cell while it runs: its resources, its events sent, the deliveries so far, and the execution
 * environment the next invocation gets. `runCell` drains it one invocation at a time; an
 * interleaving runs two invocations through it at once, then drains the rest.
 */
export class CellSession {
  readonly deliveries: DeliveryRecord[] = [];
  private constructor(
    readonly env: CellEnvironment,
    readonly scenario: Scenario,
    readonly cell: CellContext,
    readonly events: readonly ScenarioEvent[],
    readonly settings: ReturnType<typeof queueOf>,
    readonly timeoutMs: number,
    readonly queueArn: string,
    private readonly streams: Record<string, string>,
    private readonly messageIndex: Map<string, number>,
    private readonly identifiers: Identifiers,
    public environment: ExecutionEnvironment,
  ) {}

  /**
   * Creates the cell's resources and sends its events (`pick`: which of the scenario's; an
   * interleaving takes one or two).
   */
  static async open(
    env: CellEnvironment,
    scenario: Scenario,
    pick: (events: readonly ScenarioEvent[]) => readonly ScenarioEvent[] = (events) => events,
  ): Promise<CellSession> {
    // Named after nothing of the scenario's: its events' ids must not be found in its tables' names.
    const id = `cell-${randomUUID().slice(0, 12)}`;
    const settings = queueOf(scenario);
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
    const events = pick(typeof scenario.events === 'function' ? scenario.events(cell) : scenario.events);
    await scenario.setup?.(cell, events);
    const messageIndex = await sendEvents(env.sqs, queues.queueUrl, events, settings.fifo);
    const identifiers = new Identifiers(
      events.map((event) => ({ id: event.id, aliases: scenario.aliases?.(event, cell) ?? [] })),
    );
    return new CellSession(
      env,
      scenario,
      cell,
      events,
      settings,
      scenario.functionTimeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS,
      queues.queueArn,
      streams,
      messageIndex,
      identifiers,
      await executionEnvironment(env, scenario, cell),
    );
  }

  /** The event a message was sent as. */
  eventOfMessage(messageId: string): string | undefined {
    return this.events[this.messageIndex.get(messageId) ?? -1]?.id;
  }

  /** The event a request's text names: an id, `batch` (several) or `-` (none). */
  eventOf(text: string): string {
    return this.identifiers.eventOf(text, [this.cell.id]);
  }

  /** The position the event was sent at. */
  order(record: SQSRecord): number {
    return this.messageIndex.get(record.messageId) ?? Number.MAX_SAFE_INTEGER;
  }

  /** Every visible message, as the records the mapping delivers, in the order they were sent. */
  async receive(): Promise<SQSRecord[]> {
    const messages = await receiveAll(this.env.sqs, this.cell.queueUrl);
    const records = messages
      .map((message) => toSqsRecord(message, this.queueArn, this.env.region))
      .sort((a, b) => this.order(a) - this.order(b));
    this.identifiers.add(records, (record) => this.eventOfMessage(record.messageId));
    return records;
  }

  /** Runs the handler of `environment` on a batch as one invocation. */
  invoke(environment: ExecutionEnvironment, invocation: Invocation, batch: readonly SQSRecord[]) {
    const deadline = (invocation.clock?.() ?? Date.now()) + this.timeoutMs;
    const handler = environment.handler;
    return invocation.run(
      // A copy: what the handler does to its event (shift its records) is not the mapping's business.
      async () =>
        handler(
          { Records: structuredClone(batch) as SQSRecord[] },
          lambdaContext(this.scenario.name, deadline, this.timeoutMs, this.env.region, invocation.clock),
        ),
      deadline,
    );
  }

  /** What the mapping deletes after a returned invocation, and what was wrong with its answer. */
  answer(
    batch: readonly SQSRecord[],
    value: unknown,
  ): { readonly delete: SQSRecord[]; readonly error?: string } {
    const answer = recordsToDelete(batch, value, this.settings.reportBatchItemFailures);
    return answer.failedWholeBatch
      ? {
          delete: answer.delete,
          error: `returned ${preview(value)}: not a batch response Lambda reads, so the whole batch failed`,
        }
      : { delete: answer.delete };
  }

  /** Deletes records as the mapping does: those SQS deleted. */
  delete(records: readonly SQSRecord[]): Promise<SQSRecord[]> {
    return deleteRecords(this.env.sqs, this.cell.queueUrl, records);
  }

  /** Makes records visible again: what the visibility timeout's end does. */
  release(records: readonly Pick<SQSRecord, 'receiptHandle'>[]): Promise<void> {
    return releaseAll(this.env.sqs, this.cell.queueUrl, records);
  }

  /** Keeps what a delivery did, as the invariant and the report read it. */
  record(
    delivery: number,
    batch: readonly SQSRecord[],
    result: InvocationResult,
    acknowledgement: 'delivered' | 'killed' | 'not-applied' | undefined,
    kept: readonly SQSRecord[],
    error: string | undefined,
    trace: DeliveryRecord['trace'],
  ): void {
    const acknowledged = acknowledgement === 'delivered';
    const events = (records: readonly SQSRecord[]) =>
      records.map((record) => this.eventOfMessage(record.messageId) ?? '-');
    this.deliveries.push({
      delivery,
      receiveCount: Math.max(...batch.map((record) => Number(record.attributes.ApproximateReceiveCount))),
      events: events(batch),
      ended: acknowledgement === 'killed' ? 'killed' : result.kind,
      acknowledged,
      ...(acknowledged && kept.length > 0 ? { failed: events(kept) } : {}),
      ...(error !== undefined ? { error } : {}),
      trace,
    });
  }

  /** A new execution environment: Lambda replaces one that died (new clients, a new handler). */
  async replaceEnvironment(): Promise<void> {
    this.environment.destroy();
    this.environment = await executionEnvironment(this.env, this.scenario, this.cell);
  }

  /**
   * The mapping's rounds, one invocation at a time, with the planned faults, until nothing is
   * visible: the first round as the scenario batches it, a redelivery with the batch it came in.
   */
  async drain(plan: readonly PlannedFault[], time: CellTime = WALL_TIME): Promise<void> {
    const firstBatches = batchIndexes(this.events.length, this.scenario.batches, this.settings.batchSize);
    for (let round = 1; round <= this.settings.maxReceiveCount + 2; round += 1) {
      const records = await this.receive();
      if (records.length === 0) break;
      const batches = groupBy(records, (record) => firstBatches[this.order(record)] ?? 0).flatMap((batch) =>
        chunk(batch, this.settings.batchSize),
      );
      const remaining: SQSRecord[] = [];
      /** FIFO: a group whose message was not deleted holds its later messages back (AWS: in order, per group). */
      const heldGroups = new Set<string>();
      let lastDeadline = time.now();
      for (const all of batches) {
        const batch = all.filter((record) => !heldGroups.has(groupOf(record)));
        remaining.push(...all.filter((record) => heldGroups.has(groupOf(record))));
        if (batch.length === 0) continue;
        const delivery = this.deliveries.length + 1;
        const faults = new Map<string, Fault>(
          plan.filter((fault) => fault.delivery === delivery).map((fault) => [fault.step, fault.fault]),
        );
        const invocation = new Invocation(
          delivery,
          faults,
          (text) => this.eventOf(text),
          time.clock ? { clock: time.clock } : {},
        );
        lastDeadline = time.now() + this.timeoutMs;
        const result = await this.invoke(this.environment, invocation, batch);
        const acknowledgement = result.kind === 'returned' ? invocation.acknowledge() : undefined;
        let deleted: SQSRecord[] = [];
        let error: string | undefined = result.kind === 'threw' ? describe(result.error) : undefined;
        if (result.kind === 'returned' && acknowledgement === 'delivered') {
          const answer = this.answer(batch, result.value);
          error = answer.error;
          deleted = await this.delete(answer.delete);
        }
        const kept = batch.filter((record) => !deleted.includes(record));
        this.record(delivery, batch, result, acknowledgement, kept, error, invocation.trace);
        if (result.kind === 'killed' || result.kind === 'timed-out' || acknowledgement === 'killed') {
          await this.replaceEnvironment();
        }
        remaining.push(...kept);
        if (this.settings.fifo) for (const record of kept) heldGroups.add(groupOf(record));
      }
      if (remaining.length === 0) continue;
      // The visibility timeout: never before the last invocation's deadline.
      await time.waitUntil(lastDeadline + 50);
      await this.release(remaining);
    }
  }

  /** The final state judged by the invariant; then the cell's resources deleted. */
  async close(): Promise<CellRun> {
    const { env, cell } = this;
    const final: FinalState = {
      events: this.events,
      tables: Object.fromEntries(
        await Promise.all(
          Object.entries(cell.tables).map(
            async ([name, table]) => [name, await scanTable(env.ddb, table)] as const,
          ),
        ),
      ),
      changes: Object.fromEntries(
        await Promise.all(
          Object.entries(this.streams).map(
            async ([name, arn]) => [name, await readChanges(env.dynamodb, arn)] as const,
          ),
        ),
      ),
      deadLetters: await readDeadLetters(
        env.sqs,
        cell.deadLetterQueueUrl,
        (message) =>
          this.eventOfMessage(message.MessageId ?? '') ?? this.identifiers.eventOf(message.Body ?? ''),
      ),
      cell,
      deliveries: this.deliveries,
    };
    const verdict = await judge(this.scenario, final);
    // The cell's own resources, gone once judged: hundreds of cells on one DynamoDB Local and fauxqs.
    await Promise.allSettled([
      ...Object.values(cell.tables).map((table) =>
        env.dynamodb.send(new DeleteTableCommand({ TableName: table })),
      ),
      ...[cell.queueUrl, cell.deadLetterQueueUrl].map((url) =>
        env.sqs.send(new DeleteQueueCommand({ QueueUrl: url })),
      ),
    ]);
    return {
      cell,
      deliveries: this.deliveries,
      timedOut: this.deliveries.some((each) => each.ended === 'timed-out'),
      ...verdict,
    };
  }
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

function groupOf(record: SQSRecord): string {
  return record.attributes.MessageGroupId ?? '';
}

async function sleepUntil(time: number): Promise<void> {
  const wait = time - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

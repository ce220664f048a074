import { createHash, randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deleteRecords } from '@sqs-delivery-semantics/consumer-cores/delete-records';
import type { SQSRecord } from 'aws-lambda';
import { isFifoMode, MODES, type Mode, type ModeSettings } from '../../contract/topology.js';
import type { ChargeReader } from '../../functions/shared/charge-outcome.js';
import type { ManifestEvent, ManifestSummary } from '../../functions/shared/manifest.js';
import { writeManifestEvents, writeManifestSummary } from '../../functions/shared/manifest.js';
import { EVENT_ID_ATTRIBUTE, type MessageBody } from '../../functions/shared/message.js';
import type { ModeOutcome } from '../../functions/shared/outcome.js';
import { verifyMode } from '../../functions/verifier.js';
import { context, syntheticBodies } from '../benchmarks/floor.js';
import { createModeQueues } from '../environments/provision.js';
import { entryOf } from '../experiment/producer.js';
import { receiveCountOf, recordsToDelete, toSqsRecord } from '../lambda-runtime/sqs-event.js';
import { Invocation } from './invocation.js';
import { type CellTarget, cellHandler } from './mode-deps.js';
import type { Fault, PlannedFault, Step } from './steps.js';

/** The scenario every cell of a mode runs: one batch, by construction. */
export interface Scenario {
  readonly events: number;
  readonly accounts: number;
  /** The first `resent` events sent a second time, as messages of their own (a producer's retry). */
  readonly resent: number;
}

/** What the cells of one exploration share: the emulators, the tables, the provider. */
export interface ExploreEnvironment {
  readonly region: string;
  /** One client each for what every cell sends outside its consumer: queues, manifest, verifier. */
  readonly sqs: SQSClient;
  readonly ddb: DynamoDBDocumentClient;
  readonly sqsEndpoint: string;
  readonly dynamodbEndpoint: string;
  readonly tableName: string;
  readonly idempotencyTableName: string;
  readonly providerUrl?: string;
  readonly charges?: ChargeReader;
}

export interface DeliveryRecord {
  readonly delivery: number;
  readonly receiveCount: number;
  readonly records: number;
  /**
   * returned / threw / killed, or timed out: still running at the function timeout, ended there as
   * Lambda ends it. A timed-out delivery is not the cell that was planned (the machine was too
   * slow): the cell says so (`timedOut`), and the explorer runs fewer cells at once (`--parallel`).
   */
  readonly ended: 'returned' | 'threw' | 'killed' | 'timed-out';
  readonly acknowledged: boolean;
  readonly trace: readonly Step[];
}

export interface CellRun {
  readonly runId: string;
  /** A delivery ran into its function timeout. */
  readonly timedOut: boolean;
  readonly outcome: ModeOutcome;
  readonly deliveries: readonly DeliveryRecord[];
}

/**
 * How long an invocation may run, as its context says: Powertools' INPROGRESS record expires with
 * it. The mapping makes a record that was not deleted visible again only after it, as a queue
 * whose visibility timeout is at least the function timeout does (AWS's requirement): the
 * shortest wait that keeps a redelivery from overlapping the invocation it follows.
 */
export const FUNCTION_TIMEOUT_MS = 2_000;

/** Deliveries a cell makes at most: every receive SQS allows, and one that finds the queue empty. */
function maxDeliveries(mode: Mode): number {
  return MODES[mode].maxReceiveCount + 2;
}

/**
 * One cell: a fresh run (its own queue and DLQ, its own run id in the shared tables) of the
 * scenario, delivered as one batch to the mode's consumer in this process, with the planned
 * faults, drained (redeliveries at receiveCount + 1, SQS's DLQ after the max receive count), and
 * counted by the verifier's own join.
 */
export async function runCell(
  env: ExploreEnvironment,
  mode: Mode,
  scenario: Scenario,
  plan: readonly PlannedFault[],
): Promise<CellRun> {
  const runId = `explore-${randomUUID().slice(0, 12)}`;
  const { sqs } = env;
  const settings = MODES[mode] as ModeSettings;
  const suffix = isFifoMode(mode) ? '.fifo' : '';
  const queues = await createModeQueues(
    sqs,
    mode,
    { visibilityTimeoutSeconds: 60, maxReceiveCount: settings.maxReceiveCount },
    { queue: `${runId}-${mode}${suffix}`, deadLetterQueue: `${runId}-${mode}-dlq${suffix}` },
  );
  const bodies = syntheticBodies(runId, scenario.events, scenario.accounts);
  const resent = bodies.slice(0, scenario.resent);
  const summary = await writeManifest(env, runId, mode, bodies, resent.length);
  const fifo = isFifoMode(mode);
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: queues.queueUrl,
      // A re-send right after its original: a FIFO queue drops it (its deduplication id is the event's).
      Entries: [...bodies, ...resent].map((body, index) =>
        entryOf(
          runId,
          { eventId: body.eventId, accountId: body.accountId, body: JSON.stringify(body) },
          index,
          fifo,
        ),
      ),
    }),
  );
  const target: CellTarget = { ...env, queueUrl: queues.queueUrl };
  let environment = await cellHandler(mode, target);
  const identifiers = new Identifiers(bodies);
  const order = new Map(bodies.map((body, index) => [body.eventId, index]));
  const deliveries: DeliveryRecord[] = [];
  for (let delivery = 1; delivery <= maxDeliveries(mode); delivery += 1) {
    const messages = await receiveAll(sqs, queues.queueUrl, bodies.length + resent.length);
    if (messages.length === 0) break;
    // In the scenario's order whatever order SQS returns them in: the same trace on every run.
    const records = messages
      .map((message) => toSqsRecord(message, queues.queueArn, env.region))
      .sort((a, b) => (order.get(eventIdOf(a)) ?? 0) - (order.get(eventIdOf(b)) ?? 0));
    identifiers.add(records);
    const faults = new Map<string, Fault>(
      plan.filter((fault) => fault.delivery === delivery).map((fault) => [fault.step, fault.fault]),
    );
    const invocation = new Invocation(delivery, faults, (text) => identifiers.eventOf(text));
    const deadline = Date.now() + FUNCTION_TIMEOUT_MS;
    const result = await invocation.run(
      () => environment.handler({ Records: records }, context(mode, deadline)),
      deadline,
    );
    const acknowledgement = result.kind === 'returned' ? invocation.acknowledge() : undefined;
    let deleted: SQSRecord[] = [];
    if (result.kind === 'returned' && acknowledgement === 'delivered') {
      deleted = recordsToDelete(records, result.value, settings.reportBatchItemFailures).delete;
      if (deleted.length > 0) await deleteRecords(sqs, queues.queueUrl, deleted);
    }
    deliveries.push({
      delivery,
      receiveCount: Math.max(...records.map((record) => receiveCountOf(record))),
      records: records.length,
      ended: acknowledgement === 'killed' ? 'killed' : result.kind,
      acknowledged: acknowledgement === 'delivered',
      trace: invocation.trace,
    });
    if (result.kind === 'killed' || result.kind === 'timed-out' || acknowledgement === 'killed') {
      // Lambda replaces an execution environment that died: new clients, a new Powertools utility.
      environment.destroy();
      environment = await cellHandler(mode, target);
    }
    const remaining = records.filter((record) => !deleted.includes(record));
    if (remaining.length === 0) continue;
    // The visibility timeout: never before the invocation's own deadline.
    await sleepUntil(deadline + 50);
    await releaseAll(sqs, queues.queueUrl, remaining);
  }
  const outcome = await verifyMode(
    {
      reader: { ddb: env.ddb, tableName: env.tableName },
      sqs,
      deadLetterQueueUrls: new Proxy({} as Record<Mode, string>, { get: () => queues.deadLetterQueueUrl }),
      sweepWaitSeconds: 0,
      sweepVisibilitySeconds: 60,
      ...(env.charges ? { charges: env.charges } : {}),
    },
    runId,
    mode,
    summary,
  );
  environment.destroy();
  return { runId, outcome, deliveries, timedOut: deliveries.some((each) => each.ended === 'timed-out') };
}

/** The producer's manifest of the scenario, and its summary. */
async function writeManifest(
  env: ExploreEnvironment,
  runId: string,
  mode: Mode,
  bodies: readonly MessageBody[],
  producerDuplicates: number,
): Promise<ManifestSummary> {
  const store = { ddb: env.ddb, tableName: env.tableName };
  const events: ManifestEvent[] = bodies.map(({ eventId, accountId, amountCents, seq }) => ({
    eventId,
    accountId,
    amountCents,
    ...(seq !== undefined ? { seq } : {}),
  }));
  const summary: ManifestSummary = {
    produced: events.length,
    poison: 0,
    producerDuplicates,
    expectedCents: events.reduce((sum, event) => sum + event.amountCents, 0),
    modes: [mode],
  };
  await writeManifestEvents(store, runId, events);
  await writeManifestSummary(store, runId, summary);
  return summary;
}

function eventIdOf(record: SQSRecord): string {
  return record.messageAttributes[EVENT_ID_ATTRIBUTE]?.stringValue ?? '';
}

/** Every visible message, up to `limit`: the mapping's one batch. */
async function receiveAll(sqs: SQSClient, queueUrl: string, limit: number): Promise<Message[]> {
  const messages: Message[] = [];
  while (messages.length < limit) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, limit - messages.length),
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) break;
    messages.push(...Messages);
  }
  return messages;
}

/** What the visibility timeout's end does: the records are visible again (a deleted one is skipped). */
async function releaseAll(sqs: SQSClient, queueUrl: string, records: readonly SQSRecord[]): Promise<void> {
  for (let start = 0; start < records.length; start += 10) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: records.slice(start, start + 10).map((record, index) => ({
          Id: String(index),
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: 0,
        })),
      }),
    );
  }
}

async function sleepUntil(time: number): Promise<void> {
  const wait = time - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/**
 * Which event a request is about, from what it carries: the event's id, its messages' ids and
 * receipt handles, or the key Powertools derives from either (a hash). Several events: `batch`.
 */
class Identifiers {
  private readonly byIdentifier = new Map<string, string>();

  constructor(bodies: readonly MessageBody[]) {
    for (const body of bodies) {
      this.byIdentifier.set(body.eventId, body.eventId);
      for (const key of [body.eventId, [body.runId, body.eventId]]) {
        this.byIdentifier.set(powertoolsHash(key), body.eventId);
      }
    }
  }

  add(records: readonly SQSRecord[]): void {
    for (const record of records) {
      const eventId = record.messageAttributes[EVENT_ID_ATTRIBUTE]?.stringValue;
      if (eventId === undefined) continue;
      this.byIdentifier.set(record.messageId, eventId);
      this.byIdentifier.set(record.receiptHandle, eventId);
      this.byIdentifier.set(powertoolsHash(record.messageId), eventId);
    }
  }

  eventOf(text: string): string {
    const events = new Set<string>();
    for (const [identifier, eventId] of this.byIdentifier) if (text.includes(identifier)) events.add(eventId);
    if (events.size === 1) return [...events][0] as string;
    return events.size === 0 ? '-' : 'batch';
  }
}

/** The hash in Powertools' idempotency key of what it selected (BasePersistenceLayer: MD5 of its JSON, base64). */
function powertoolsHash(selected: unknown): string {
  return createHash('md5').update(JSON.stringify(selected)).digest('base64');
}

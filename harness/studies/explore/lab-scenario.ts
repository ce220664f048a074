import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  type CellContext,
  type DeliveryRecord,
  type HandlerClients,
  interceptFetch,
  powertoolsHash,
  type Scenario,
  type ScenarioEvent,
} from '@sqs-delivery-semantics/explorer';
import {
  EVENT_ID_ATTRIBUTE,
  fifoIdsOf,
  type MessageBody,
  RUN_ID_ATTRIBUTE,
} from '../../../contract/message.js';
import { isFifoMode, MODES, type Mode, settingsOf } from '../../../contract/topology.js';
import { buildConsumerDeps, harnessConfig } from '../../../modes/kit/consumer.js';
import { isCoreSend } from '../../../modes/kit/instrumented-client.js';
import { inProcessHandler } from '../../../modes/lab-modes.js';
import { createPaymentClient } from '../../../services/payment-provider/client.js';
import type { ChargeReader } from '../../../verifier/charge-outcome.js';
import {
  type ManifestEvent,
  type ManifestSummary,
  writeManifestEvents,
  writeManifestSummary,
} from '../../../verifier/manifest.js';
import { verifyMode } from '../../../verifier/mode-verification.js';
import type { ModeOutcome } from '../../../verifier/outcome.js';
import { syntheticBodies } from '../benchmarks/floor.js';
import { type CellCounts, countsOf, isExact, promiseText, violationNames } from './verdict.js';

/** The lab's scenario for a mode: one batch of synthetic credits, by construction. */
export interface LabScenario {
  readonly events: number;
  readonly accounts: number;
  /** The first `resent` events sent a second time, as messages of their own (a producer's retry). */
  readonly resent: number;
  /** The function timeout, ms (the explorer's default 2000): each redelivery waits for it. */
  readonly functionTimeoutMs?: number;
}

/** What the lab's cells share beside the emulators: its tables and the payment provider. */
export interface LabTables {
  readonly ddb: DynamoDBDocumentClient;
  /** For the verifier's sweep of a cell's DLQ. */
  readonly sqs: SQSClient;
  readonly tableName: string;
  readonly idempotencyTableName: string;
  readonly providerUrl?: string;
  readonly charges?: ChargeReader;
}

/** What the lab's invariant hands back with its violations: the verifier's outcome and its counts. */
export interface LabDetail {
  readonly outcome: ModeOutcome;
  readonly counts: CellCounts;
  readonly exact: boolean;
}

/**
 * A lab mode as the explorer's API takes a team's consumer: its handler (the lab's processBatch
 * over the clients the explorer hands it), its events (one batch of credits, written to the shared
 * ledger's manifest under the cell's id), and its promise as the invariant: the verifier's own
 * join, by event id.
 */
export function labScenario(tables: LabTables, mode: Mode, scenario: LabScenario): Scenario {
  const settings = settingsOf(mode);
  const fifo = isFifoMode(mode);
  const summaries = new Map<string, ManifestSummary>();
  const eventsOf = (cell: CellContext): ScenarioEvent[] => {
    const bodies = syntheticBodies(cell.id, scenario.events, scenario.accounts);
    return [...bodies, ...bodies.slice(0, scenario.resent)].map((body) => ({
      id: body.eventId,
      body,
      attributes: { [RUN_ID_ATTRIBUTE]: cell.id, [EVENT_ID_ATTRIBUTE]: body.eventId },
      ...(fifo ? fromFifoIds(fifoIdsOf(cell.id, body.accountId, body.eventId)) : {}),
    }));
  };
  return {
    name: mode,
    promise: promiseText(mode),
    queue: {
      fifo,
      maxReceiveCount: settings.maxReceiveCount,
      reportBatchItemFailures: settings.reportBatchItemFailures,
    },
    events: eventsOf,
    // Powertools' key in the mode keyed on the event: a hash of [runId, eventId].
    aliases: (event, cell) => [powertoolsHash([cell.id, event.id])],
    // The manifest of the events as sent: the first `scenario.events` (the rest are re-sends).
    setup: async (cell, events) => {
      const produced = events.slice(0, scenario.events).map((event) => event.body as MessageBody);
      summaries.set(cell.id, await writeManifest(tables, cell.id, mode, produced, scenario.resent));
    },
    handler: (clients) => labHandler(mode, tables, clients),
    invariant: async (final) => {
      const summary = summaries.get(final.cell.id);
      if (summary === undefined) throw new Error(`no manifest for cell ${final.cell.id}`);
      summaries.delete(final.cell.id);
      const outcome = await verifyMode(
        {
          reader: { ddb: tables.ddb, tableName: tables.tableName },
          sqs: tables.sqs,
          deadLetterQueueUrls: new Proxy({} as Record<Mode, string>, {
            get: () => final.cell.deadLetterQueueUrl,
          }),
          sweepWaitSeconds: 0,
          sweepVisibilitySeconds: 60,
          ...(tables.charges ? { charges: tables.charges } : {}),
        },
        final.cell.id,
        mode,
        summary,
      );
      const counts = countsOf(mode, outcome);
      // The events this cell produced: an interleaving takes one or two of the scenario's.
      const exact = isExact(counts, summary.produced);
      const detail: LabDetail = { outcome, counts, exact };
      const passedTheDelete = deletedBeforeWork(mode, final.deliveries);
      return {
        violations: violationNames(mode, outcome).filter(
          // Delete first promises no duplicate from its own crash; two receives of one message that
          // both pass the delete (a visibility timeout that ended mid-invocation, a standard queue's
          // second copy) both work: the interleavings show it, and the promise allows it.
          (violation) => !(passedTheDelete && violation.endsWith('applied twice or more')),
        ),
        summary: `${countsText(counts, exact)}${passedTheDelete && counts.duplicated > 0 ? ' (both passed the delete)' : ''}`,
        tone: exact ? 'exact' : 'held',
        detail,
      };
    },
  };
}

/**
 * A delete-first mode (it may lose, never duplicates from a crash) in which two deliveries both
 * sent the delete before their work: SQS handed the message out twice, and each receiver deleted it.
 */
function deletedBeforeWork(mode: Mode, deliveries: readonly DeliveryRecord[]): boolean {
  const { noLoss, noDuplicates } = MODES[mode].promises;
  if (noLoss || !noDuplicates) return false;
  /** The delivery sent its delete (a step after it was taken) before its first write. */
  const deletedFirst = (delivery: DeliveryRecord) => {
    const trace = delivery.trace;
    const deleted = trace.findIndex(
      (step) => step.service === 'sqs' && step.operation.startsWith('DeleteMessage'),
    );
    const wrote = trace.findIndex((step) => step.service === 'dynamodb');
    return deleted >= 0 && deleted < trace.length - 1 && (wrote === -1 || deleted < wrote);
  };
  // One message received by two deliveries that each deleted it before working.
  const receivers = new Map<string, number>();
  for (const delivery of deliveries.filter(deletedFirst)) {
    for (const event of new Set(delivery.events)) receivers.set(event, (receivers.get(event) ?? 0) + 1);
  }
  return [...receivers.values()].some((count) => count >= 2);
}

function fromFifoIds(ids: { MessageGroupId: string; MessageDeduplicationId: string }) {
  return { groupId: ids.MessageGroupId, deduplicationId: ids.MessageDeduplicationId };
}

/** A cell in a few words: `exact`, or what went wrong (`dup 1, lost 2`). */
export function countsText(counts: CellCounts, exact: boolean): string {
  if (exact) return 'exact';
  const parts = [
    counts.duplicated > 0 ? `dup ${counts.duplicated}` : '',
    counts.lost > 0 ? `lost ${counts.lost}` : '',
    counts.deadLettered > 0 ? `dlq ${counts.deadLettered}` : '',
    (counts.chargedTwice ?? 0) > 0 ? `charged twice ${counts.chargedTwice}` : '',
    counts.consistent ? '' : 'ledger ≠ balance',
  ].filter((part) => part !== '');
  return parts.length > 0 ? parts.join(', ') : `drift ${counts.driftCents}`;
}

/**
 * A mode's handler in one execution environment of a cell: the lab's processBatch, its clients
 * made by the explorer's intercept so that every attempt the consumer sends (not the lab's own
 * evidence and counters, `isCoreSend`) is a step. No crash settings: faults come only from the plan.
 */
async function labHandler<M extends Mode>(mode: M, tables: LabTables, clients: HandlerClients) {
  const config = {
    region: clients.region,
    credentials: clients.credentials,
    endpoint: clients.endpoints.dynamodb,
  };
  const ledgerClient = clients.intercept(new DynamoDBClient(config), 'dynamodb', isCoreSend);
  const idempotencyClient = clients.intercept(new DynamoDBClient(config), 'dynamodb');
  const singleAttempt = clients.intercept(
    new DynamoDBClient({ ...config, maxAttempts: 1 }),
    'dynamodb',
    isCoreSend,
  );
  const ddb = DynamoDBDocumentClient.from(ledgerClient);
  const deps = buildConsumerDeps(harnessConfig(mode, tables.tableName), {
    ddb,
    sqs: clients.sqs,
    logger: new Logger({ serviceName: mode, logLevel: 'SILENT' }),
  });
  return inProcessHandler(mode, deps, {
    queueUrl: clients.queueUrl,
    idempotencyTableName: tables.idempotencyTableName,
    idempotencyClient,
    workDdb: DynamoDBDocumentClient.from(singleAttempt),
    ...(tables.providerUrl !== undefined
      ? {
          // The client as deployed in shape; its retries' backoff shorter in time.
          payments: createPaymentClient({
            url: tables.providerUrl,
            sign: false,
            fetch: interceptFetch(fetch, 'Charge'),
            baseDelayMs: 20,
          }),
        }
      : {}),
  });
}

/** The producer's manifest of the scenario, and its summary. */
async function writeManifest(
  tables: LabTables,
  runId: string,
  mode: Mode,
  bodies: readonly MessageBody[],
  producerDuplicates: number,
): Promise<ManifestSummary> {
  const store = { ddb: tables.ddb, tableName: tables.tableName };
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

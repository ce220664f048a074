/**
 * Each mode's production shape, priced next to its instrumented one (issue 15, "the honest price").
 * In the experiment a mode may write what the verifier needs to count by event id beside its
 * business write: at-least-once an application record in the credit's transaction, state-upsert a
 * record per event after its state write. A team ships the business write alone. Here each mode
 * that has such a shape declares it in {@link PRODUCTION_SHAPES} — its credit without the
 * verifier's writes — and the metered run drives it through the same work-then-acknowledge loop as
 * the modes, in the bench's own process (its records synthetic, batch by batch with `concurrency`
 * in flight), through a request meter of its own in front of DynamoDB Local.
 *
 * at-least-once's production shape is the bench's yardstick: one `UpdateItem` (`ADD balanceCents`),
 * what a team ships when it accepts duplicates, and the price the marker transaction must be
 * compared with.
 *
 * A production shape is not a mode (contract/topology.ts): without the verifier's records it cannot
 * be checked by id, only by the money — nothing crashes here, so its balances must add up to the
 * money sent. Its SQS requests and Lambda invocations are those of the queue, the mapping and the
 * loop, not of the write: the metered run takes them from the mode it measured beside it.
 *
 * Adding one is one entry in PRODUCTION_SHAPES: the mode's business write as an ApplyMessage (ideally
 * exported by its handler module, so that the bench prices exactly what the handler does), what it
 * writes in words, and the write units per message it should cost.
 */

import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, paginateQuery, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { balanceKey, partitionKey, SK } from '../../contract/ledger-keys.js';
import { DEFAULT_RETENTION } from '../../contract/retention.js';
import { isFifoMode, type Mode } from '../../contract/topology.js';
import type { ConsumerDeps } from '../../functions/shared/consumer.js';
import { createCrashInjector } from '../../functions/shared/crash.js';
import { InvalidMessageError } from '../../functions/shared/errors.js';
import { type Ledger, singleWriteError } from '../../functions/shared/ledger.js';
import { creditInOrder, writeState } from '../../functions/shared/one-write-credits.js';
import { type ApplyMessage, workThenAcknowledge } from '../../functions/shared/work-then-acknowledge.js';
import type { OperationCounts } from '../dynamodb-proxy/meter.js';
import { meterPolicy } from '../dynamodb-proxy/meter.js';
import { startDynamoDbProxy } from '../dynamodb-proxy/proxy.js';
import { forEachConcurrently } from '../experiment/concurrently.js';
import { type DynamoDbUsage, dynamodbUsageOf } from './cost-model.js';
import { context, syntheticBatches, syntheticBodies } from './floor.js';

/** A mode's business write without the verifier's records: what a team would ship. */
export interface ProductionShape {
  /** What it writes per message, as the table's note says it. */
  readonly writes: string;
  /** The credit of one message; thrown errors fail the record, as in every mode. */
  readonly apply: ApplyMessage;
  /**
   * The write units one message should cost (small items), the delivery counter aside: the bench's
   * test holds every production row to it.
   */
  readonly writeUnitsPerMessage: number;
}

/** How the table and the report name a mode's production-shape row. */
export const productionName = (mode: Mode): string => `${mode} (production shape)`;

/** The credit of a production at-least-once consumer: `ADD balanceCents`, one write of a small item. */
export const applyProductionAtLeastOnce: ApplyMessage = async (deps, message) => {
  try {
    await deps.ledger.ddb.send(
      new UpdateCommand({
        TableName: deps.ledger.tableName,
        Key: { pk: partitionKey(message.runId, deps.ledger.mode), sk: balanceKey(message.accountId) },
        UpdateExpression: 'ADD balanceCents :amount',
        ExpressionAttributeValues: { ':amount': message.amountCents },
      }),
    );
    return 'applied';
  } catch (error) {
    // As every mode: the record is reported failed and SQS delivers it again.
    throw singleWriteError(error, message.eventId);
  }
};

/**
 * state-upsert's business write alone: the handler's own conditional `SET balanceCents, version`
 * (functions/shared/one-write-credits.ts), without the per-event record the verifier reads. A
 * superseded (or repeated) state is acknowledged, not an error — and billed, as AWS bills a failed
 * conditional write.
 */
export const applyProductionStateUpsert: ApplyMessage = async (deps, message) => {
  if (message.balanceAfterCents === undefined) {
    throw new InvalidMessageError('balanceAfterCents', 'is required by state-upsert (a state event)');
  }
  const written = await writeState(deps, message, message.balanceAfterCents, Date.now());
  return written === 'written' ? 'applied' : 'duplicate';
};

/**
 * fifo-versioned's business write alone: the handler's own conditional credit (`ADD balanceCents`,
 * `SET version = seq` if the version is seq − 1), without the per-event record the verifier reads.
 */
export const applyProductionFifoVersioned: ApplyMessage = async (deps, message) =>
  (await creditInOrder(deps, message, Date.now())) === 'credited' ? 'applied' : 'duplicate';

/**
 * The modes the bench prices in their production shape, next to their instrumented rows. A mode
 * without an entry is priced as the experiment runs it only (its instrumented shape is what it
 * would ship, or it has no one-write shape).
 */
export const PRODUCTION_SHAPES: Partial<Record<Mode, ProductionShape>> = {
  'at-least-once': {
    writes: 'one UpdateItem (ADD balanceCents) per message, no application record',
    apply: applyProductionAtLeastOnce,
    writeUnitsPerMessage: 1,
  },
  'state-upsert': {
    writes: 'one conditional UpdateItem (SET balanceCents, version) per message, no per-event record',
    apply: applyProductionStateUpsert,
    writeUnitsPerMessage: 1,
  },
  'fifo-versioned': {
    writes:
      'one conditional UpdateItem (ADD balanceCents, SET version = seq) per message, no per-event record',
    apply: applyProductionFifoVersioned,
    writeUnitsPerMessage: 1,
  },
};

/** The yardstick every price is compared with: at-least-once in its production shape. */
export const YARDSTICK_MODE = 'at-least-once' satisfies Mode;

/** One invocation of a production shape: the work-then-acknowledge loop with its credit. */
export function processBatch(
  shape: ProductionShape,
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  return workThenAcknowledge(event, context, deps, shape.apply);
}

export interface ProductionRun {
  readonly messages: number;
  readonly batches: number;
  /** Records the loop reported failed: must be 0, or the run measured something else. */
  readonly failedRecords: number;
  readonly dynamodb: DynamoDbUsage;
  /** Its DynamoDB requests per operation, as its meter counted them. */
  readonly dynamodbByOperation: Readonly<Record<string, OperationCounts>>;
  /** Σ write units DynamoDB Local reported (ConsumedCapacity) for the same requests. */
  readonly reportedWriteUnits: number;
  /** The only check it has: Σ balances against the money sent. */
  readonly money: { readonly expectedCents: number; readonly balanceCents: number; readonly exact: boolean };
}

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** Runs a mode's production shape over `messages` synthetic records through its own meter; checks the money. */
export async function meterProductionShape(
  mode: Mode,
  shape: ProductionShape,
  options: {
    /** DynamoDB Local itself (the meter is started in front of it here). */
    readonly endpoint: string;
    readonly region: string;
    readonly tableName: string;
    readonly messages: number;
    readonly accounts: number;
    readonly batchSize: number;
    readonly concurrency: number;
  },
): Promise<ProductionRun> {
  const meter = meterPolicy();
  const proxy = await startDynamoDbProxy({ target: options.endpoint, policies: [meter] });
  const client = (endpoint: string) =>
    DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: options.region, credentials: CREDENTIALS, endpoint }),
    );
  const metered = client(proxy.endpoint);
  const direct = client(options.endpoint);
  const sqs = new SQSClient({ region: options.region, credentials: CREDENTIALS });
  try {
    // Under the mode's own partition: the meter attributes its requests to the mode, and the stack's
    // memory for the mode prices its Lambda line; its own run id keeps it apart from the mode's runs.
    const ledger: Ledger = { ddb: metered, tableName: options.tableName, mode, retention: DEFAULT_RETENTION };
    const deps: ConsumerDeps = {
      config: {
        mode,
        tableName: options.tableName,
        crashRate: 0,
        crashSeed: 'production-shape',
        crashAt: new Set(),
        retention: DEFAULT_RETENTION,
        ageGuard: true,
      },
      ledger,
      // The loop never calls SQS: Lambda deletes what the handler does not report failed.
      sqs,
      logger: new Logger({ serviceName: `${mode}-production-shape`, logLevel: 'ERROR' }),
      crash: createCrashInjector({ rate: 0, seed: 'production-shape', record: async () => undefined }),
    };
    const runId = `bench-production-${randomUUID().slice(0, 8)}`;
    const bodies = syntheticBodies(runId, options.messages, options.accounts);
    const expectedCents = bodies.reduce((sum, body) => sum + body.amountCents, 0);
    const batches = syntheticBatches(bodies, options.batchSize);
    let failedRecords = 0;
    // A FIFO mode's mapping keeps each account's order: its batches one at a time, as they were made.
    await forEachConcurrently(batches, isFifoMode(mode) ? 1 : options.concurrency, async (records) => {
      const { batchItemFailures } = await processBatch(shape, { Records: records }, context(mode), deps);
      failedRecords += batchItemFailures.length;
    });
    const operations = structuredClone(meter.stats.byMode[mode] ?? {});
    // Read straight from DynamoDB Local: the check is the harness's, not the consumer's cost.
    let balanceCents = 0;
    for await (const page of paginateQuery(
      { client: direct },
      {
        TableName: options.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :balance)',
        ExpressionAttributeValues: { ':pk': partitionKey(runId, mode), ':balance': SK.balancePrefix },
        ConsistentRead: true,
      },
    )) {
      for (const item of page.Items ?? []) balanceCents += Number(item.balanceCents ?? 0);
    }
    const { reportedWriteUnits, ...dynamodb } = dynamodbUsageOf(operations);
    return {
      messages: options.messages,
      batches: batches.length,
      failedRecords,
      dynamodb,
      dynamodbByOperation: operations,
      reportedWriteUnits,
      money: { expectedCents, balanceCents, exact: failedRecords === 0 && balanceCents === expectedCents },
    };
  } finally {
    metered.destroy();
    direct.destroy();
    sqs.destroy();
    await proxy.stop();
  }
}

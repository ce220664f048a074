/**
 * Each mode's production shape, priced next to its instrumented one (issue 15, "the honest price"):
 * the mode's core (packages/consumer-cores/src/) exactly as a team builds it — its own keys, its own writes, no
 * lab around it — fed synthetic batches in the bench's own process (`concurrency` in flight), through
 * a request meter of its own in front of DynamoDB Local. In the experiment the lab adds what the
 * verifier needs beside the same requests (evidence attributes, a record after an idempotent write,
 * counters); here nothing is added.
 *
 * at-least-once's production shape is the bench's yardstick: one `UpdateItem` (`ADD balanceCents`),
 * what a team ships when it accepts duplicates, and the price the marker transaction must be
 * compared with.
 *
 * A production shape is not a mode (contract/topology.ts): without the lab's evidence it cannot be
 * checked by id, only by the money — nothing crashes here, so its balances must add up to the money
 * sent. Its SQS requests and Lambda invocations are those of the queue, the mapping and the loop,
 * not of the write: the metered run takes them from the mode it measured beside it.
 *
 * Adding one is one entry in PRODUCTION_SHAPES: the core built with plain keys, what it writes in
 * words, and the write units per message it should cost.
 */

import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, paginateQuery, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createAtLeastOnceHandler } from '@sqs-delivery-semantics/consumer-cores/at-least-once';
import { createEffectivelyOnceHandler } from '@sqs-delivery-semantics/consumer-cores/effectively-once';
import { createEntryUpsertHandler } from '@sqs-delivery-semantics/consumer-cores/entry-upsert';
import { createFifoVersionedHandler } from '@sqs-delivery-semantics/consumer-cores/fifo-versioned';
import type { ConsumerLogger } from '@sqs-delivery-semantics/consumer-cores/logger';
import { createStateUpsertHandler } from '@sqs-delivery-semantics/consumer-cores/state-upsert';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { balanceKey, markerKey, partitionKey, SK } from '../../../contract/ledger-keys.js';
import { type MessageBody, parseMessageBody } from '../../../contract/message.js';
import { isFifoMode, type Mode } from '../../../contract/topology.js';
import type { OperationCounts } from '../../local-aws/dynamodb-proxy/meter.js';
import { meterPolicy } from '../../local-aws/dynamodb-proxy/meter.js';
import { startDynamoDbProxy } from '../../local-aws/dynamodb-proxy/proxy.js';
import { LOCAL_CREDENTIALS } from '../../local-aws/local-identity.js';
import { forEachConcurrently } from '../../run/concurrently.js';
import { type DynamoDbUsage, dynamodbUsageOf } from './cost-model.js';
import { syntheticBatches, syntheticBodies } from './floor.js';

/** What a production shape's core is built with: plain clients, one table, the run's partition. */
export interface ShapeDeps {
  readonly ddb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly tableName: string;
  /** The partition key of the bench's run for this mode (the meter attributes requests by it). */
  readonly pk: string;
  readonly logger: ConsumerLogger;
}

/** A mode's core with nothing but its own settings: what a team would ship. */
export interface ProductionShape {
  /** What it writes per message, as the table's note says it. */
  readonly writes: string;
  /** The core's handler; the records it reports failed are counted, and must be none. */
  readonly handler: (deps: ShapeDeps) => (event: SQSEvent) => Promise<SQSBatchResponse>;
  /**
   * The write units one message should cost (small items): the bench's test holds every production
   * row to it.
   */
  readonly writeUnitsPerMessage: number;
}

/** How the table and the report name a mode's production-shape row. */
export const productionName = (mode: Mode): string => `${mode} (production shape)`;

const balanceOf = (deps: ShapeDeps, message: MessageBody) => ({
  pk: deps.pk,
  sk: balanceKey(message.accountId),
});
const credit = (deps: ShapeDeps, message: MessageBody) => ({
  TableName: deps.tableName,
  Key: balanceOf(deps, message),
  UpdateExpression: 'ADD balanceCents :amount',
  ExpressionAttributeValues: { ':amount': message.amountCents },
});

/**
 * The modes the bench prices in their production shape, next to their instrumented rows: each one
 * its core (packages/consumer-cores/src/), the lab's parse (the bench's bodies are the lab's) and plain keys.
 */
export const PRODUCTION_SHAPES: Partial<Record<Mode, ProductionShape>> = {
  'at-least-once': {
    writes: 'one UpdateItem (ADD balanceCents) per message',
    handler: (deps) =>
      createAtLeastOnceHandler<MessageBody>({
        parse: parseMessageBody,
        logger: deps.logger,
        work: async (message) => {
          await deps.ddb.send(new UpdateCommand(credit(deps, message)));
        },
      }),
    writeUnitsPerMessage: 1,
  },
  'effectively-once': {
    writes: 'one TransactWriteItems per message: the conditional marker and the credit (2 items, 2 WCU each)',
    handler: (deps) =>
      createEffectivelyOnceHandler<MessageBody>({
        ddb: deps.ddb,
        markerTable: deps.tableName,
        parse: parseMessageBody,
        logger: deps.logger,
        markerKey: (message) => ({ pk: deps.pk, sk: markerKey(message.eventId) }),
        writesFor: (message) => [{ Update: credit(deps, message) }],
      }),
    writeUnitsPerMessage: 4,
  },
  'entry-upsert': {
    writes: 'one conditional UpdateItem (SET the entry) per message, no balance item',
    handler: (deps) =>
      createEntryUpsertHandler<MessageBody>({
        ddb: deps.ddb,
        table: deps.tableName,
        parse: parseMessageBody,
        logger: deps.logger,
        entryKey: (message) => ({ pk: deps.pk, sk: markerKey(message.eventId) }),
        entryOf: (message) => ({ accountId: message.accountId, amountCents: message.amountCents }),
      }),
    writeUnitsPerMessage: 1,
  },
  'state-upsert': {
    writes: 'one conditional UpdateItem (SET balanceCents, version) per message',
    handler: (deps) =>
      createStateUpsertHandler<MessageBody>({
        ddb: deps.ddb,
        table: deps.tableName,
        parse: parseMessageBody,
        logger: deps.logger,
        stateKey: (message) => balanceOf(deps, message),
        versionOf: (message) => message.seq,
        stateOf: (message) => ({ balanceCents: message.balanceAfterCents ?? 0 }),
      }),
    writeUnitsPerMessage: 1,
  },
  'fifo-versioned': {
    writes: 'one conditional UpdateItem (ADD balanceCents, SET version = seq) per message',
    handler: (deps) =>
      createFifoVersionedHandler<MessageBody>({
        ddb: deps.ddb,
        table: deps.tableName,
        sqs: deps.sqs,
        queueUrl: 'https://sqs.invalid/unused-without-a-gap.fifo',
        parse: parseMessageBody,
        logger: deps.logger,
        key: (message) => balanceOf(deps, message),
        seqOf: (message) => message.seq,
        deltasOf: (message) => ({ balanceCents: message.amountCents }),
      }),
    writeUnitsPerMessage: 1,
  },
};

/** The yardstick every price is compared with: at-least-once in its production shape. */
export const YARDSTICK_MODE = 'at-least-once' satisfies Mode;

const SILENT: ConsumerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

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
      new DynamoDBClient({ region: options.region, credentials: LOCAL_CREDENTIALS, endpoint }),
    );
  const metered = client(proxy.endpoint);
  const direct = client(options.endpoint);
  const sqs = new SQSClient({ region: options.region, credentials: LOCAL_CREDENTIALS });
  try {
    // Under the mode's own partition: the meter attributes its requests to the mode, and the stack's
    // memory for the mode prices its Lambda line; its own run id keeps it apart from the mode's runs.
    const runId = `bench-production-${randomUUID().slice(0, 8)}`;
    const handler = shape.handler({
      ddb: metered,
      sqs,
      tableName: options.tableName,
      pk: partitionKey(runId, mode),
      logger: SILENT,
    });
    const bodies = syntheticBodies(runId, options.messages, options.accounts);
    const expectedCents = bodies.reduce((sum, body) => sum + body.amountCents, 0);
    const batches = syntheticBatches(bodies, options.batchSize);
    let failedRecords = 0;
    // A FIFO mode's mapping keeps each account's order: its batches one at a time, as they were made.
    await forEachConcurrently(batches, isFifoMode(mode) ? 1 : options.concurrency, async (records) => {
      const { batchItemFailures } = await handler({ Records: records });
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
        ExpressionAttributeValues: {
          ':pk': partitionKey(runId, mode),
          // entry-upsert keeps no balance item: its money is the sum of its entries.
          ':balance': mode === 'entry-upsert' ? SK.applicationPrefix : SK.balancePrefix,
        },
        ConsistentRead: true,
      },
    )) {
      for (const item of page.Items ?? []) balanceCents += Number(item.balanceCents ?? item.amountCents ?? 0);
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

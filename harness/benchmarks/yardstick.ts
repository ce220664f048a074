/**
 * The bench's yardstick: at-least-once in its production shape (issue 15, "the honest price"). The
 * same work-then-acknowledge loop as the at-least-once mode, but the credit is one `UpdateItem`
 * (`ADD balanceCents`) on the account's balance item and nothing else — no application record,
 * which this project's at-least-once writes in the same transaction only so that the verifier can
 * count its duplicates by event id. That is what a team ships when it accepts duplicates, and the
 * price the marker transaction must be compared with.
 *
 * It is not a mode (contract/topology.ts): without an application record the verifier cannot check
 * it by id, only by the money — nothing crashes here, so its balances must add up to the money sent.
 * It runs in the bench's process, as the floor does (its records synthetic, batch by batch with
 * `concurrency` in flight), through a request meter of its own in front of DynamoDB Local. Its SQS
 * requests and Lambda invocations are those of the queue, the mapping and the loop, not of the
 * write: the metered run takes them from the at-least-once mode it measured beside it.
 */

import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, paginateQuery, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { balanceKey, partitionKey, SK } from '../../contract/ledger-keys.js';
import { DEFAULT_RETENTION } from '../../contract/retention.js';
import type { ConsumerDeps } from '../../functions/shared/consumer.js';
import { createCrashInjector } from '../../functions/shared/crash.js';
import { type Ledger, singleWriteError } from '../../functions/shared/ledger.js';
import { type ApplyMessage, workThenAcknowledge } from '../../functions/shared/work-then-acknowledge.js';
import type { OperationCounts } from '../dynamodb-proxy/meter.js';
import { meterPolicy } from '../dynamodb-proxy/meter.js';
import { startDynamoDbProxy } from '../dynamodb-proxy/proxy.js';
import { forEachConcurrently } from '../experiment/concurrently.js';
import { type DynamoDbUsage, dynamodbUsageOf } from './cost-model.js';
import { context, record } from './floor.js';

/** How the table and the report name the yardstick's row. */
export const YARDSTICK_NAME = 'at-least-once (production shape)';

/**
 * The ledger partition it writes under: at-least-once's, so that the meter attributes its requests
 * and the stack's memory prices its Lambda line; its own run id keeps it apart from the mode's runs.
 */
const LEDGER_MODE = 'at-least-once';

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

/** One invocation of the yardstick: the at-least-once loop with the one-write credit. */
export function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  return workThenAcknowledge(event, context, deps, applyProductionAtLeastOnce);
}

export interface YardstickRun {
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

/** Runs the yardstick over `messages` synthetic records through its own meter; checks the money. */
export async function meterYardstick(options: {
  /** DynamoDB Local itself (the meter is started in front of it here). */
  readonly endpoint: string;
  readonly region: string;
  readonly tableName: string;
  readonly messages: number;
  readonly accounts: number;
  readonly batchSize: number;
  readonly concurrency: number;
}): Promise<YardstickRun> {
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
    const ledger: Ledger = {
      ddb: metered,
      tableName: options.tableName,
      mode: LEDGER_MODE,
      retention: DEFAULT_RETENTION,
    };
    const deps: ConsumerDeps = {
      config: {
        mode: LEDGER_MODE,
        tableName: options.tableName,
        crashRate: 0,
        crashSeed: 'yardstick',
        crashAt: new Set(),
        retention: DEFAULT_RETENTION,
        ageGuard: true,
      },
      ledger,
      // The loop never calls SQS: Lambda deletes what the handler does not report failed.
      sqs,
      logger: new Logger({ serviceName: 'yardstick', logLevel: 'ERROR' }),
      crash: createCrashInjector({ rate: 0, seed: 'yardstick', record: async () => undefined }),
    };
    const runId = `bench-yardstick-${randomUUID().slice(0, 8)}`;
    let expectedCents = 0;
    const batches: SQSRecord[][] = [];
    for (let start = 0; start < options.messages; start += options.batchSize) {
      const size = Math.min(options.batchSize, options.messages - start);
      batches.push(
        Array.from({ length: size }, (_, offset) => {
          const index = start + offset;
          const amountCents = 1 + (index % 997);
          expectedCents += amountCents;
          return record(
            {
              eventId: `evt-${String(index).padStart(7, '0')}`,
              runId,
              accountId: `acct-${index % options.accounts}`,
              amountCents,
              seq: Math.floor(index / options.accounts) + 1,
              createdAt: new Date().toISOString(),
            },
            index,
          );
        }),
      );
    }
    let failedRecords = 0;
    await forEachConcurrently(batches, options.concurrency, async (records) => {
      const { batchItemFailures } = await processBatch({ Records: records }, context(LEDGER_MODE), deps);
      failedRecords += batchItemFailures.length;
    });
    const operations = structuredClone(meter.stats.byMode[LEDGER_MODE] ?? {});
    // Read straight from DynamoDB Local: the check is the harness's, not the consumer's cost.
    let balanceCents = 0;
    for await (const page of paginateQuery(
      { client: direct },
      {
        TableName: options.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :balance)',
        ExpressionAttributeValues: { ':pk': partitionKey(runId, LEDGER_MODE), ':balance': SK.balancePrefix },
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

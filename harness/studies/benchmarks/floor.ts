/**
 * The floor: each mode's DynamoDB write pattern, issued straight at DynamoDB Local by the handlers'
 * own code — the same processBatch a Lambda invocation runs, imported in this process — fed with
 * synthetic SQS batches instead of a queue. What is left out is exactly SQS, the event source
 * mapping and the Lambda runtime (processes, IPC, logging to files), so end to end ÷ floor is what
 * those cost on this machine. The workers mirror the mapping: `concurrency` batches in flight, the
 * records of one batch one after another, as the handlers do.
 *
 * at-most-once deletes its batch from SQS before the work; here its SQS client answers every
 * DeleteMessageBatch with success without sending it, so its DynamoDB pattern is what remains.
 */

import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { MessageBody } from '../../../contract/message.js';
import { isFifoMode, type Mode } from '../../../contract/topology.js';
import { buildConsumerDeps, harnessConfig } from '../../../modes/kit/consumer.js';
import { inProcessHandler, type NeedsInputs } from '../../../modes/lab-modes.js';
import { createPaymentClient } from '../../../services/payment-provider/client.js';
import { LOCAL_CREDENTIALS } from '../../local-aws/local-identity.js';
import { forEachConcurrently } from '../../run/concurrently.js';

export interface FloorTarget {
  readonly endpoint: string;
  readonly region: string;
  readonly tableName: string;
  readonly idempotencyTableName: string;
  /** The payment provider the charge modes call, when the environment runs one. */
  readonly providerUrl?: string;
}

export interface FloorRun {
  readonly mode: Mode;
  readonly messages: number;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly accounts: number;
}

export interface FloorResult extends FloorRun {
  readonly seconds: number;
  readonly perSecond: number;
  /** Records the handler code reported failed: must be 0, or the floor measured something else. */
  readonly failedRecords: number;
}

type BatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** An SQS client that answers every request as a complete success, locally. */
function acceptingSqsClient(region: string): SQSClient {
  const sqs = new SQSClient({ region, credentials: LOCAL_CREDENTIALS });
  sqs.middlewareStack.add(
    () => async () => ({ response: {}, output: { Successful: [], Failed: [], $metadata: {} } }),
    { step: 'initialize', name: 'floorAcceptEverything' },
  );
  return sqs;
}

const FLOOR_QUEUE_URL = 'http://127.0.0.1:1/floor/never-called';

/**
 * What the floor gives a mode's needs (modes/lab-modes.ts): an SQS client that accepts every
 * delete, its own Powertools client, at-most-once's single-attempt work client, and the payment
 * provider when the bench environment runs one.
 */
function floorNeedsInputs(target: FloorTarget): NeedsInputs {
  const config = { region: target.region, credentials: LOCAL_CREDENTIALS, endpoint: target.endpoint };
  return {
    queueUrl: FLOOR_QUEUE_URL,
    idempotencyTableName: target.idempotencyTableName,
    idempotencyClient: new DynamoDBClient(config),
    workDdb: DynamoDBDocumentClient.from(new DynamoDBClient({ ...config, maxAttempts: 1 })),
    ...(target.providerUrl !== undefined
      ? { payments: createPaymentClient({ url: target.providerUrl, sign: false }) }
      : {}),
  };
}

/** Per mode: its handler's processBatch with deps that write to `target`. */
async function loadHandler<M extends Mode>(mode: M, target: FloorTarget): Promise<BatchHandler> {
  const ddb = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: target.region, credentials: LOCAL_CREDENTIALS, endpoint: target.endpoint }),
  );
  const deps = buildConsumerDeps(harnessConfig(mode, target.tableName), {
    ddb,
    sqs: acceptingSqsClient(target.region),
    logger: new Logger({ serviceName: mode, logLevel: 'ERROR' }),
  });
  return inProcessHandler(mode, deps, floorNeedsInputs(target));
}

/**
 * The bench's synthetic events, as the producer makes them: event ids in order, the accounts in
 * turn, amounts 1–997 cents, each account's `seq` (1, 2, 3, …) and its balance after the event
 * (`balanceAfterCents`, the running sum: state-upsert writes it).
 */
export function syntheticBodies(runId: string, messages: number, accounts: number): MessageBody[] {
  const balances = new Map<string, { seq: number; cents: number }>();
  const createdAt = new Date().toISOString();
  return Array.from({ length: messages }, (_, index) => {
    const accountId = `acct-${index % accounts}`;
    const amountCents = 1 + (index % 997);
    const before = balances.get(accountId) ?? { seq: 0, cents: 0 };
    const after = { seq: before.seq + 1, cents: before.cents + amountCents };
    balances.set(accountId, after);
    return {
      eventId: `evt-${String(index).padStart(7, '0')}`,
      runId,
      accountId,
      amountCents,
      seq: after.seq,
      balanceAfterCents: after.cents,
      createdAt,
    };
  });
}

/** The bodies as SQS records, in batches of `batchSize`, in order. */
export function syntheticBatches(bodies: readonly MessageBody[], batchSize: number): SQSRecord[][] {
  const batches: SQSRecord[][] = [];
  for (let start = 0; start < bodies.length; start += batchSize) {
    batches.push(bodies.slice(start, start + batchSize).map((body, offset) => record(body, start + offset)));
  }
  return batches;
}

/** One synthetic SQS record of `body`, as the mapping would hand it over on its first delivery. */
export function record(body: MessageBody, index: number): SQSRecord {
  const messageId = randomUUID();
  return {
    messageId,
    receiptHandle: `floor-${messageId}`,
    body: JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'floor',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: { runId: { stringValue: body.runId, dataType: 'String' } },
    md5OfBody: 'not-checked',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:floor-${index}`,
    awsRegion: 'us-east-1',
  };
}

/** A Lambda context named after `mode`, its time up at `deadline` (30 s from now by default). */
export function context(mode: Mode, deadline = Date.now() + 30_000): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: mode,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${mode}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${mode}`,
    logStreamName: 'floor',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Runs one mode's handler code over `messages` synthetic records; returns messages per second. */
export async function measureFloor(target: FloorTarget, run: FloorRun): Promise<FloorResult> {
  const handle = await loadHandler(run.mode, target);
  const runId = `floor-${run.mode}-${randomUUID().slice(0, 8)}`;
  const batches = syntheticBatches(syntheticBodies(runId, run.messages, run.accounts), run.batchSize);
  let failedRecords = 0;
  const started = performance.now();
  // A FIFO mode's mapping keeps each account's order: its batches one at a time, as they were made.
  await forEachConcurrently(batches, isFifoMode(run.mode) ? 1 : run.concurrency, async (records) => {
    const { batchItemFailures } = await handle({ Records: records }, context(run.mode));
    failedRecords += batchItemFailures.length;
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    ...run,
    seconds: Math.round(seconds * 1000) / 1000,
    perSecond: Math.round((run.messages / seconds) * 10) / 10,
    failedRecords,
  };
}

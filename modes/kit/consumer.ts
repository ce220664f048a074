import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSRecord } from 'aws-lambda';
import type { ConsumerConfig } from '../../contract/config.js';
import { describeError } from '../../contract/errors.js';
import {
  COUNTERS,
  crashKey,
  type Delivery,
  partitionKey,
  TTL_ATTRIBUTE,
} from '../../contract/ledger-keys.js';
import { createLogger } from '../../contract/logger.js';
import { receiveCountOf, runIdOf } from '../../contract/message.js';
import { DEFAULT_RETENTION } from '../../contract/retention.js';
import type { Mode } from '../../contract/topology.js';
import { type CrashInjector, type CrashPoint, createCrashInjector, type Kill } from './crash.js';
import { addToCounter, expiresAt, type Ledger } from './ledger.js';

/** Everything a consumer needs, built once per execution environment and injectable in tests. */
export interface ConsumerDeps {
  readonly config: ConsumerConfig;
  readonly ledger: Ledger;
  readonly sqs: SQSClient;
  readonly logger: Logger;
  readonly crash: CrashInjector;
}

/**
 * What the common deps are built from, beyond the config: each part defaults to what the Lambda
 * entry uses (clients from the SDK's standard environment, the mode's logger, the process's kill);
 * a harness that runs a mode in its own process (the floor bench, the explorer, the tests) gives
 * its own.
 */
export interface ConsumerDepsParts {
  readonly ddb?: DynamoDBDocumentClient;
  readonly sqs?: SQSClient;
  readonly logger?: Logger;
  /** Replaces SIGKILL: a test's kill that settles nothing. */
  readonly kill?: Kill;
  /** The ledger's clock and its retries of a cancelled transaction. */
  readonly ledger?: Pick<Ledger, 'now' | 'retry'>;
}

/** The one way the common deps are built: by the Lambda entry (labMode), the harness and the tests. */
export function buildConsumerDeps(config: ConsumerConfig, parts: ConsumerDepsParts = {}): ConsumerDeps {
  const ledger: Ledger = {
    ddb: parts.ddb ?? DynamoDBDocumentClient.from(new DynamoDBClient({})),
    tableName: config.tableName,
    mode: config.mode,
    retention: config.retention,
    ...parts.ledger,
  };
  const logger = parts.logger ?? createLogger(config.mode, { mode: config.mode });
  return {
    config,
    ledger,
    sqs: parts.sqs ?? new SQSClient({}),
    logger,
    crash: createCrashWithRecord(config, ledger, logger, parts.kill),
  };
}

/**
 * The config of a mode run in a harness's own process: no crash drawn (the harness kills, if it
 * does, by its own means), the default retention, the age guard on; `overrides` for a test's.
 */
export function harnessConfig(
  mode: Mode,
  tableName: string,
  overrides: Partial<ConsumerConfig> = {},
): ConsumerConfig {
  return {
    mode,
    tableName,
    crashRate: 0,
    crashSeed: 'harness',
    crashAt: new Set(),
    retention: DEFAULT_RETENTION,
    ageGuard: true,
    ...overrides,
  };
}

export function createCrashWithRecord(
  config: ConsumerConfig,
  ledger: Ledger,
  logger: Logger,
  kill?: Kill,
): CrashInjector {
  return createCrashInjector({
    rate: config.crashRate,
    seed: config.crashSeed,
    at: config.crashAt,
    ...(kill ? { kill } : {}),
    record: async (point) => {
      logger.warn('injected crash: SIGKILL', {
        crashPoint: point.where,
        key: point.key,
        receiveCount: point.receiveCount,
      });
      const runId = point.runId;
      if (runId === undefined) return;
      // Side by side, and settled both: one failing must not let the kill cut the other short.
      await Promise.allSettled([
        addToCounter(ledger, runId, COUNTERS.crashes, 1),
        recordCrashItem(ledger, runId, point),
      ]);
    },
  });
}

/**
 * The crash as an item of the mode's partition, so the verifier can say which event it hit and
 * when. An update that adds to `crashes`, not a put: a re-sent copy of the same event crashing at
 * the same receive count shares the key and must not hide the first crash.
 */
export async function recordCrashItem(ledger: Ledger, runId: string, point: CrashPoint): Promise<void> {
  const now = ledger.now?.() ?? Date.now();
  await ledger.ddb.send(
    new UpdateCommand({
      TableName: ledger.tableName,
      Key: { pk: partitionKey(runId, ledger.mode), sk: crashKey(point.key, point.receiveCount) },
      UpdateExpression:
        'ADD crashes :one SET #key = :key, receiveCount = :receiveCount, #where = :where, crashedAt = :crashedAt, #ttl = :ttl',
      ExpressionAttributeNames: { '#key': 'key', '#where': 'where', '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: {
        ':one': 1,
        ':key': point.key,
        ':receiveCount': point.receiveCount,
        ':where': point.where,
        ':crashedAt': new Date(now).toISOString(),
        ':ttl': expiresAt(ledger, now),
      },
    }),
  );
}

/**
 * The work-first modes' crash point, "after applying the message, before the batch is
 * acknowledged": drawn by the lab once a record's work (or the write a core sent for it) has
 * answered, before the core moves on.
 */
export function crashAfterApplying(
  deps: Pick<ConsumerDeps, 'crash'>,
  message: { readonly runId: string; readonly eventId: string },
  receiveCount: number,
): Promise<void> {
  return deps.crash.maybeCrash({
    runId: message.runId,
    key: message.eventId,
    receiveCount,
    where: 'after applying the message, before the batch is acknowledged',
  });
}

/** Which delivery this is: the message, its receive count, the invocation and the record's place in it. */
export function deliveryOf(
  record: SQSRecord,
  context: Pick<Context, 'awsRequestId'>,
  position: number,
): Delivery {
  return {
    messageId: record.messageId,
    receiveCount: receiveCountOf(record),
    requestId: context.awsRequestId,
    position,
  };
}

/**
 * Counts every record handed to the handler as a delivery, before any work, one counter update
 * per run in the batch. Records that cannot be attributed to a run are logged, not counted.
 * If this write fails the handler throws before touching anything, so the batch is retried whole.
 */
export async function countDeliveries(deps: ConsumerDeps, records: readonly SQSRecord[]): Promise<void> {
  // Before any work: the crash draws need each record's redrive count (a malformed one fails the batch).
  deps.crash.observe?.(records);
  const perRun = new Map<string, number>();
  for (const record of records) {
    const runId = runIdOf(record);
    if (runId === undefined) {
      deps.logger.warn('delivery not attributable to a run', { messageId: record.messageId });
      continue;
    }
    perRun.set(runId, (perRun.get(runId) ?? 0) + 1);
  }
  await Promise.all(
    [...perRun].map(([runId, count]) => addToCounter(deps.ledger, runId, COUNTERS.deliveries, count)),
  );
}

/** What happens to a record a work-first handler reports as failed. */
export const REPORTED_AS_FAILED = 'reported in batchItemFailures: SQS redelivers it, then dead-letters it';

export function logRecordFailure(
  deps: ConsumerDeps,
  record: SQSRecord,
  error: unknown,
  consequence: string,
): void {
  deps.logger.error('record not applied', {
    messageId: record.messageId,
    receiveCount: receiveCountOf(record),
    consequence,
    error: describeError(error),
    ...fieldOf(error),
  });
}

function fieldOf(error: unknown): { field?: string } {
  return typeof error === 'object' && error !== null && 'field' in error && typeof error.field === 'string'
    ? { field: error.field }
    : {};
}

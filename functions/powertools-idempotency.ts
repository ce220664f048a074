import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { IDEMPOTENCY_TABLE_ENV } from '../contract/function-environment.js';
import { COUNTERS, type Delivery } from '../contract/ledger-keys.js';
import { STORAGE } from '../contract/topology.js';
import { readConsumerConfig, requireEnv } from './shared/config.js';
import {
  type ConsumerDeps,
  countDeliveries,
  createConsumerDeps,
  deliveryOf,
  logRecordFailure,
  REPORTED_AS_FAILED,
} from './shared/consumer.js';
import { addToCounter, type CreditOutcome, creditAccount } from './shared/ledger.js';
import { type MessageBody, parseMessageBody } from './shared/message.js';

/**
 * powertools-idempotency: what a team gets from the Powertools utilities used as documented.
 * BatchProcessor hands each record to a function wrapped in `makeIdempotent`: Powertools writes an
 * INPROGRESS record to its own table (conditional PutItem), runs the function — the same credit as
 * at-least-once — then marks the record COMPLETED (UpdateItem); Lambda deletes the batch after the
 * return. A redelivery of a COMPLETED event is skipped. But the idempotency record and the credit
 * are two writes, not one transaction: a crash between the credit and COMPLETED leaves an
 * INPROGRESS record, and once its in-progress expiry (the invocation's remaining time, registered
 * from the Lambda context) has passed, the redelivery takes the record over and credits again.
 */

/** The idempotency utility's configuration and store, built once per execution environment. */
export interface Idempotency {
  readonly config: IdempotencyConfig;
  readonly persistenceStore: DynamoDBPersistenceLayer;
}

export interface PowertoolsConsumerDeps extends ConsumerDeps {
  readonly idempotency: Idempotency;
  /** Stateful per invocation (its failures), so one per execution environment, as Powertools documents. */
  readonly processor: BatchProcessor;
}

/** What the idempotent function returns, and what Powertools stores with the COMPLETED record. */
export interface CreditResult {
  readonly outcome: CreditOutcome;
}

export type IdempotentCredit = (message: MessageBody, delivery: Delivery) => Promise<CreditResult>;

export const CRASH_POINT = 'after the effect is durable, before Powertools marks the record COMPLETED';

export function createIdempotency(
  tableName: string,
  client: DynamoDBClient = new DynamoDBClient({}),
): Idempotency {
  return {
    config: new IdempotencyConfig({
      // The producer's event id within its run: event ids repeat across runs (`evt-000000`…), as
      // the ledger's markers do per run partition. Keyed on the id alone, a second run against the
      // same stack would find the first run's COMPLETED records and skip every event.
      eventKeyJmesPath: '[runId, eventId]',
      // A reused id with another account or amount is not a duplicate: Powertools throws
      // IdempotencyValidationError, the record fails and ends in the DLQ, as in effectively-once.
      payloadValidationJmesPath: '[accountId, amountCents]',
      // The key comes from a validated body, so a missing key is a bug: fail, never skip idempotency.
      throwOnNoIdempotencyKey: true,
      // Powertools' default is one hour. A COMPLETED record must outlive every way the message can
      // come back (queue retention, a DLQ redrive), like the ledger's markers.
      expiresAfterSeconds: STORAGE.ledgerTtlSeconds,
      // Called only when Powertools answers from a COMPLETED record instead of running the
      // function: that is a suppressed duplicate.
      responseHook: () => ({ outcome: 'duplicate' }) satisfies CreditResult,
    }),
    persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client }),
  };
}

/**
 * The credit, made idempotent per event. Inside the idempotent function, so between Powertools'
 * INPROGRESS and COMPLETED writes: at-least-once's transaction (an application record per
 * application and the balance), then the crash point.
 */
export function idempotentCredit(deps: ConsumerDeps, idempotency: Idempotency): IdempotentCredit {
  return makeIdempotent(
    async (message: MessageBody, delivery: Delivery): Promise<CreditResult> => {
      const outcome = await creditAccount(deps.ledger, message, delivery, { idempotent: false });
      await deps.crash.maybeCrash({
        runId: message.runId,
        key: message.eventId,
        receiveCount: delivery.receiveCount,
        where: CRASH_POINT,
      });
      return { outcome };
    },
    {
      persistenceStore: idempotency.persistenceStore,
      config: idempotency.config,
      // Stable across deployments: the default prefix is the function's name, which CloudFormation
      // may change on replacement, and then every stored record would be missed.
      keyPrefix: deps.config.mode,
    },
  );
}

/**
 * One record: validate, then the idempotent credit. Throws (after logging) when the record must be
 * reported as failed: an invalid body (never applied), a failed write, a reused event id, or an
 * INPROGRESS record whose in-progress expiry has not passed (IdempotencyAlreadyInProgressError:
 * SQS brings it back after the visibility timeout, by when it is COMPLETED or expired).
 */
export async function processRecord(
  deps: ConsumerDeps,
  credit: IdempotentCredit,
  record: SQSRecord,
  context: Pick<Context, 'awsRequestId'>,
  position: number,
): Promise<CreditOutcome> {
  try {
    const message = parseMessageBody(record.body);
    const { outcome } = await credit(message, deliveryOf(record, context, position));
    if (outcome === 'duplicate') {
      deps.logger.info('duplicate suppressed: idempotency record is COMPLETED', {
        eventId: message.eventId,
        messageId: record.messageId,
      });
      await addToCounter(deps.ledger, message.runId, COUNTERS.suppressedDuplicates, 1);
    }
    return outcome;
  } catch (error) {
    logRecordFailure(deps, record, error, REPORTED_AS_FAILED);
    throw error;
  }
}

export async function processBatch(
  event: SQSEvent,
  context: Context,
  deps: PowertoolsConsumerDeps,
): Promise<SQSBatchResponse> {
  // Every INPROGRESS record this invocation writes expires with the invocation (now + remaining
  // time), so a record left by a crash or a timeout does not block its event until the record's
  // full expiry.
  deps.idempotency.config.registerLambdaContext(context);
  await countDeliveries(deps, event.Records);
  const credit = idempotentCredit(deps, deps.idempotency);
  // BatchProcessor hands each record object itself to the handler; a message id is not enough, as
  // a batch may hold two copies of one message.
  const positions = new Map(event.Records.map((record, position) => [record, position] as const));
  return processPartialResponse(
    event,
    (record: SQSRecord) => processRecord(deps, credit, record, context, positions.get(record) ?? -1),
    deps.processor,
    {
      context,
      // One record after another, like the other modes, so "crash after message i" means the same.
      processInParallel: false,
      // All records failed is still a partial response listing them all, not a thrown error.
      throwOnFullBatchFailure: false,
    },
  );
}

const deps: PowertoolsConsumerDeps = {
  ...createConsumerDeps(readConsumerConfig('powertools-idempotency')),
  idempotency: createIdempotency(requireEnv(IDEMPOTENCY_TABLE_ENV)),
  processor: new BatchProcessor(EventType.SQS),
};

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  deps.logger.addContext(context);
  return processBatch(event, context, deps);
};

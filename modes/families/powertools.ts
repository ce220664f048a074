import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { requireEnv } from '../../contract/config.js';
import { IDEMPOTENCY_TABLE_ENV } from '../../contract/function-environment.js';
import { COUNTERS, type Delivery } from '../../contract/ledger-keys.js';
import { type MessageBody, parseMessageBody } from '../../contract/message.js';
import { DEFAULT_RETENTION, type Retention } from '../../contract/retention.js';
import { refuseIfTooOld } from '../kit/age-guard.js';
import {
  type ConsumerDeps,
  countDeliveries,
  deliveryOf,
  logRecordFailure,
  REPORTED_AS_FAILED,
} from '../kit/consumer.js';
import type { Idempotency, IdempotencyKeying } from '../kit/idempotency.js';
import { asCoreSend } from '../kit/instrumented-client.js';
import { type BatchHandler, type LabMode, labMode } from '../kit/lab-mode.js';
import { addToCounter, type CreditOutcome, creditAccount } from '../kit/ledger.js';

/**
 * The Powertools consumers (powertools-idempotency, powertools-message-id): BatchProcessor hands each
 * record to a function wrapped in `makeIdempotent`. Powertools writes an INPROGRESS record to its own
 * table (conditional PutItem), runs the function — the same credit as at-least-once — then marks the
 * record COMPLETED (UpdateItem); Lambda deletes the batch after the return. A delivery whose key has
 * a COMPLETED record is skipped. The modes differ only in their {@link IdempotencyKeying}: what the
 * key is taken from, and the configuration that goes with it.
 */

export interface PowertoolsConsumerDeps extends ConsumerDeps {
  readonly idempotency: Idempotency;
  /** Stateful per invocation (its failures), so one per execution environment, as Powertools documents. */
  readonly processor: BatchProcessor;
}

/** What the idempotent function returns, and what Powertools stores with the COMPLETED record. */
export interface CreditResult {
  readonly outcome: CreditOutcome;
}

export type IdempotentCredit = (
  record: SQSRecord,
  message: MessageBody,
  delivery: Delivery,
) => Promise<CreditResult>;

export const CRASH_POINT = 'after the effect is durable, before Powertools marks the record COMPLETED';

export function createIdempotency(
  keying: IdempotencyKeying,
  tableName: string,
  client: DynamoDBClient = new DynamoDBClient({}),
  retention: Retention = DEFAULT_RETENTION,
): Idempotency {
  return {
    config: new IdempotencyConfig({
      ...keying.options,
      ...(keying.remembers === 'marker-retention' ? { expiresAfterSeconds: retention.markerTtlSeconds } : {}),
      // Called only when Powertools answers from a COMPLETED record instead of running the
      // function: that is a suppressed duplicate.
      responseHook: () => ({ outcome: 'duplicate' }) satisfies CreditResult,
    }),
    persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client }),
    keyedOn: keying.keyedOn,
    ...(keying.remembers === 'marker-retention' ? { guardedBy: retention } : {}),
  };
}

/**
 * The credit, made idempotent per key. Inside the idempotent function, so between Powertools'
 * INPROGRESS and COMPLETED writes: at-least-once's transaction (an application record per
 * application and the balance), then the crash point.
 */
export function idempotentCredit(deps: ConsumerDeps, idempotency: Idempotency): IdempotentCredit {
  return makeIdempotent(
    async (_record: SQSRecord, message: MessageBody, delivery: Delivery): Promise<CreditResult> => {
      // The team's work inside Powertools' two writes: a step of the consumer (instrumented-client.ts).
      const outcome = await asCoreSend(() =>
        creditAccount(deps.ledger, message, delivery, { idempotent: false }),
      );
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
      dataIndexArgument: idempotency.keyedOn === 'record' ? 0 : 1,
      // Stable across deployments: the default prefix is the function's name, which CloudFormation
      // may change on replacement, and then every stored record would be missed. The stack's IAM
      // policy also binds each mode's function to the records under its own prefix.
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
  deps: PowertoolsConsumerDeps,
  credit: IdempotentCredit,
  record: SQSRecord,
  context: Pick<Context, 'awsRequestId'>,
  position: number,
): Promise<CreditOutcome> {
  try {
    const message = parseMessageBody(record.body);
    const guarded = deps.idempotency.guardedBy;
    // Before Powertools looks up the key: a record that has expired would not stop a second credit.
    if (guarded !== undefined) {
      await refuseIfTooOld(deps.ledger, message, { enabled: deps.config.ageGuard, retention: guarded });
    }
    const { outcome } = await credit(record, message, deliveryOf(record, context, position));
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
  // time), so a record left by a crash or a timeout does not block its key until the record's
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

export interface PowertoolsMode<M extends PowertoolsModeName> extends LabMode<M> {
  /** The mode's idempotency utility over `tableName` (the floor bench and the tests build their own). */
  readonly createIdempotency: (
    tableName: string,
    client?: DynamoDBClient,
    retention?: Retention,
  ) => Idempotency;
  readonly handler: BatchHandler;
}

type PowertoolsModeName = 'powertools-idempotency' | 'powertools-message-id';

/** A Powertools mode: the consumer above, keyed as `keying` says. Call it at a handler's module scope. */
export function powertoolsMode<M extends PowertoolsModeName>(
  mode: M,
  keying: IdempotencyKeying,
): PowertoolsMode<M> {
  return {
    ...labMode<M>({
      mode,
      needsFromEnvironment: (deps) => ({
        idempotency: createIdempotency(
          keying,
          requireEnv(IDEMPOTENCY_TABLE_ENV),
          undefined,
          deps.config.retention,
        ),
        processor: new BatchProcessor(EventType.SQS),
      }),
      processBatch,
    }),
    createIdempotency: (tableName, client, retention) =>
      createIdempotency(keying, tableName, client, retention),
  };
}

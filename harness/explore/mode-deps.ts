import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { DEFAULT_RETENTION } from '../../contract/retention.js';
import type { Mode } from '../../contract/topology.js';
import { LAB_MODES } from '../../functions/lab-modes.js';
import type { ConsumerDeps } from '../../functions/shared/consumer.js';
import { createCrashInjector } from '../../functions/shared/crash.js';
import { isCoreSend } from '../../functions/shared/instrumented-client.js';
import type { LabMode, ModeNeeds } from '../../functions/shared/lab-mode.js';
import { createPaymentClient } from '../../functions/shared/payment-client.js';
import { CREDENTIALS } from '../benchmarks/floor.js';
import { MODE_NEEDS, type NeedsInputs } from '../modes/needs.js';
import { interceptClient, interceptFetch } from './invocation.js';

/** Where a cell's consumer sends its requests. */
export interface CellTarget {
  readonly region: string;
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  readonly tableName: string;
  readonly idempotencyTableName: string;
  /** The payment provider the charge modes call. */
  readonly providerUrl?: string;
  /** The cell's own queue: the modes that delete or release records themselves need it. */
  readonly queueUrl: string;
}

/** One execution environment of a cell: its handler, and its clients' sockets to close. */
export interface CellEnvironment {
  readonly handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  destroy(): void;
}

/**
 * A mode's handler as one execution environment of a cell runs it: the lab's processBatch with
 * clients whose every attempt (the consumer's, not the lab's own) is a step of the invocation
 * making it. No crash settings: faults come only from the cell's plan.
 */
export async function cellHandler<M extends Mode>(mode: M, target: CellTarget): Promise<CellEnvironment> {
  const clientConfig = {
    region: target.region,
    credentials: CREDENTIALS,
    endpoint: target.dynamodbEndpoint,
  };
  const ledgerClient = new DynamoDBClient(clientConfig);
  interceptClient(ledgerClient, 'dynamodb', isCoreSend);
  const idempotencyClient = new DynamoDBClient(clientConfig);
  interceptClient(idempotencyClient, 'dynamodb', () => true);
  const sqs = new SQSClient({
    region: target.region,
    credentials: CREDENTIALS,
    endpoint: target.sqsEndpoint,
  });
  interceptClient(sqs, 'sqs', () => true);
  const ddb = DynamoDBDocumentClient.from(ledgerClient);
  const singleAttempt = new DynamoDBClient({ ...clientConfig, maxAttempts: 1 });
  interceptClient(singleAttempt, 'dynamodb', isCoreSend);
  const deps: ConsumerDeps = {
    config: {
      mode,
      tableName: target.tableName,
      crashRate: 0,
      crashSeed: 'explore',
      crashAt: new Set(),
      retention: DEFAULT_RETENTION,
      ageGuard: true,
    },
    ledger: { ddb, tableName: target.tableName, mode, retention: DEFAULT_RETENTION },
    sqs,
    logger: new Logger({ serviceName: mode, logLevel: 'SILENT' }),
    crash: createCrashInjector({ rate: 0, seed: 'explore', record: async () => undefined }),
  };
  const definition: LabMode<M> = await (LAB_MODES[mode] as () => Promise<LabMode<M>>)();
  const needs = await (MODE_NEEDS[mode] as (inputs: NeedsInputs) => Promise<() => ModeNeeds[M]>)({
    queueUrl: target.queueUrl,
    idempotencyTableName: target.idempotencyTableName,
    idempotencyClient,
    workDdb: DynamoDBDocumentClient.from(singleAttempt),
    ...(target.providerUrl !== undefined
      ? {
          // The client as deployed in shape; its retries' backoff shorter in time.
          payments: createPaymentClient({
            url: target.providerUrl,
            sign: false,
            fetch: interceptFetch(),
            baseDelayMs: 20,
          }),
        }
      : {}),
  });
  return {
    handler: (event, context) => definition.processBatch(event, context, { ...deps, ...needs() }),
    destroy: () => {
      for (const client of [ledgerClient, idempotencyClient, singleAttempt, sqs]) client.destroy();
    },
  };
}

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
import type { LabMode, ModeNeeds, PowertoolsNeeds } from '../../functions/shared/lab-mode.js';
import { createPaymentClient } from '../../functions/shared/payment-client.js';
import type { PowertoolsMode } from '../../functions/shared/powertools.js';
import { interceptClient, interceptFetch } from './invocation.js';

export const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

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

export type CellHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** What a mode's needs are built from, with every client's requests already steps. */
interface NeedsInputs {
  readonly target: CellTarget;
  /** Powertools' own client: every request it makes is the consumer's. */
  readonly idempotencyClient: DynamoDBClient;
  /** at-most-once's work client: one attempt per write, as its Lambda entry makes it. */
  readonly workDdb: DynamoDBDocumentClient;
}

/**
 * Per mode, what its processBatch needs beyond the common deps, as a cell gives it: set up once
 * per cell (one execution environment), then made per invocation (a Powertools BatchProcessor is
 * stateful per invocation). Typed per mode: a new mode states here how the explorer feeds it.
 */
const CELL_NEEDS: { readonly [M in Mode]: (inputs: NeedsInputs) => Promise<() => ModeNeeds[M]> } = {
  'at-most-once':
    async ({ target, workDdb }) =>
    () => ({ queueUrl: target.queueUrl, workDdb }),
  'at-least-once': async () => () => ({}),
  'effectively-once': async () => () => ({}),
  'powertools-idempotency': async (inputs) =>
    powertoolsNeeds(inputs, (await import('../../functions/powertools-idempotency.js')).consumer),
  'powertools-message-id': async (inputs) =>
    powertoolsNeeds(inputs, (await import('../../functions/powertools-message-id.js')).consumer),
  'entry-upsert': async () => () => ({}),
  'state-upsert': async () => () => ({}),
  'fifo-versioned':
    async ({ target }) =>
    () => ({ queueUrl: target.queueUrl }),
  'charge-no-key': chargeNeeds,
  'charge-with-key': chargeNeeds,
  'marker-then-credit': async () => () => ({}),
  'credit-then-marker': async () => () => ({}),
};

async function powertoolsNeeds(
  inputs: NeedsInputs,
  mode: Pick<PowertoolsMode<'powertools-idempotency' | 'powertools-message-id'>, 'createIdempotency'>,
): Promise<() => PowertoolsNeeds> {
  const { BatchProcessor, EventType } = await import('@aws-lambda-powertools/batch');
  const idempotency = mode.createIdempotency(inputs.target.idempotencyTableName, inputs.idempotencyClient);
  return () => ({ idempotency, processor: new BatchProcessor(EventType.SQS) });
}

async function chargeNeeds({ target }: NeedsInputs): Promise<() => ModeNeeds['charge-no-key']> {
  if (target.providerUrl === undefined)
    throw new Error('a charge mode is explored with the payment provider');
  // Few, quick retries, as deployed in shape (the same client), shorter in time.
  const payments = createPaymentClient({
    url: target.providerUrl,
    sign: false,
    fetch: interceptFetch(),
    baseDelayMs: 20,
  });
  return () => ({ charge: { payments, lostResponseRate: 0 } });
}

/**
 * A mode's handler as one execution environment of a cell runs it: the lab's processBatch with
 * clients whose every attempt (the consumer's, not the lab's own) is a step of the invocation
 * making it. No crash settings: faults come only from the cell's plan.
 */
export async function cellHandler<M extends Mode>(mode: M, target: CellTarget): Promise<CellHandler> {
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
  const needs = await (CELL_NEEDS[mode] as (inputs: NeedsInputs) => Promise<() => ModeNeeds[M]>)({
    target,
    idempotencyClient,
    workDdb: DynamoDBDocumentClient.from(singleAttempt),
  });
  return (event, context) => definition.processBatch(event, context, { ...deps, ...needs() });
}

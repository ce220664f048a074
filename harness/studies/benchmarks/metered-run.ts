import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_RETENTION } from '../../../contract/retention.js';
import { MODES, type Mode } from '../../../contract/topology.js';
import { creditAccount } from '../../../modes/kit/ledger.js';
import type { OperationCounts } from '../../local-aws/dynamodb-proxy/meter.js';
import { LOCAL_CREDENTIALS } from '../../local-aws/local-identity.js';
import { DEFAULTS } from '../../options/declaration.js';
import { newRunId, runExperiment } from '../../run/experiment.js';
import { dynamodbUsageOf, type ModeUsage, productionUsage } from './cost-model.js';
import { benchConfig, startBenchEnvironment } from './environment.js';
import { meterProductionShape, PRODUCTION_SHAPES, type ProductionRun } from './production-shape.js';
import { meterSqs } from './sqs-meter.js';

export interface MeteredMode {
  readonly usage: ModeUsage;
  /** The consumers' DynamoDB requests per operation, as the meter counted them. */
  readonly dynamodbByOperation: Readonly<Record<string, OperationCounts>>;
  /** Σ write units DynamoDB Local reported (ConsumedCapacity) for the same requests, failures excluded. */
  readonly reportedWriteUnits: number;
}

export interface MeteredProductionShape {
  readonly run: ProductionRun;
  /** Its DynamoDB counts with its mode's Lambda and SQS (cost-model.ts, productionUsage). */
  readonly usage: ModeUsage;
}

export interface CancelledTransactionCase {
  /** Whether DynamoDB Local put ConsumedCapacity on the cancellation it answered. */
  readonly consumedCapacityReported: boolean;
  readonly cancellationCode: string;
  /** What the rules count for it, if a cancellation is billed like the write (2 per KB per item). */
  readonly ruleWriteUnits: number;
}

/**
 * Counts, per mode, every request and unit one run at the topology's settings needs, with the
 * request meter in front of DynamoDB Local and the SQS meter on the harness's client. Throughput is
 * not measured here (the meter is a proxy in the path).
 */
export async function meteredRun(options: {
  readonly modes: readonly Mode[];
  readonly messages: number;
  readonly log: (message: string) => void;
}): Promise<{
  modes: Partial<Record<Mode, MeteredMode>>;
  /** Each metered mode's production shape (production-shape.ts), where it has one. */
  production: Partial<Record<Mode, MeteredProductionShape>>;
  cancelled: CancelledTransactionCase;
}> {
  const batchSize = MODES['effectively-once'].batchSize;
  const concurrency = MODES['effectively-once'].maxConcurrency;
  const env = await startBenchEnvironment({
    modes: options.modes,
    batchSize,
    concurrency,
    meterDynamoDb: true,
    onStatus: options.log,
  });
  const meter = env.local.dynamoDbMeter;
  if (!meter) throw new Error('the environment was started without its DynamoDB meter');
  const sqsMeter = meterSqs(env.sqs, (mode) => env.queueUrl(mode), options.modes);
  const modes: Partial<Record<Mode, MeteredMode>> = {};
  try {
    // Discarded: cold starts and DynamoDB Local's JIT warm-up would inflate the first mode's durations.
    for (const mode of options.modes) {
      await runExperiment(env, benchConfig(mode, 50, 'bench-warm-up'), newRunId('bench-warm-up'), {
        phase: () => undefined,
      });
    }
    for (const mode of options.modes) {
      const before = { ...env.local.functionStats(mode) };
      meter.reset();
      sqsMeter.reset();
      const seed = `bench-metered-${mode}`;
      const report = await runExperiment(env, benchConfig(mode, options.messages, seed), newRunId(seed), {
        phase: () => undefined,
      });
      const after = env.local.functionStats(mode);
      const operations = meter.stats.byMode[mode] ?? {};
      const sqs = sqsMeter.stats[mode] ?? {};
      const invocations = (after?.invocations ?? 0) - (before.invocations ?? 0);
      const deliveries = report.modes[mode]?.deliveries ?? options.messages;
      const receive = sqs.ReceiveMessage;
      const { reportedWriteUnits, ...dynamodb } = dynamodbUsageOf(operations);
      modes[mode] = {
        usage: {
          messages: options.messages,
          lambda: {
            invocations,
            billedDurationMs: (after?.billedDurationMs ?? 0) - (before.billedDurationMs ?? 0),
          },
          sqs: {
            sendRequests:
              (sqs.SendMessageBatch?.billedRequests ?? 0) + (sqs.SendMessage?.billedRequests ?? 0),
            receiveRequests: receive ? receive.billedRequests - receive.empty : 0,
            emptyReceives: receive?.empty ?? 0,
            // at-most-once deletes from its own code: one DeleteMessageBatch per 10 records of each invocation.
            deleteRequests: MODES[mode].deletesOwnBatch
              ? invocations * Math.ceil(deliveries / Math.max(invocations, 1) / 10)
              : (sqs.DeleteMessageBatch?.billedRequests ?? 0) + (sqs.DeleteMessage?.billedRequests ?? 0),
          },
          dynamodb,
        },
        dynamodbByOperation: structuredClone(operations),
        reportedWriteUnits,
      };
      options.log(`metered ${mode}: ${JSON.stringify(modes[mode]?.usage)}`);
    }
    const production: Partial<Record<Mode, MeteredProductionShape>> = {};
    for (const mode of options.modes) {
      const shape = PRODUCTION_SHAPES[mode];
      const instrumented = modes[mode];
      if (!shape || !instrumented) continue;
      const run = await meterProductionShape(mode, shape, {
        endpoint: env.local.dynamodbEndpoint,
        region: env.local.region,
        tableName: env.tableName,
        messages: options.messages,
        accounts: DEFAULTS.accounts,
        batchSize,
        concurrency,
      });
      production[mode] = { run, usage: productionUsage(run.messages, run.dynamodb, instrumented.usage) };
      options.log(
        `metered ${mode} in its production shape: ${JSON.stringify(run.dynamodb)}, money ${JSON.stringify(run.money)}`,
      );
    }
    return {
      modes,
      production,
      cancelled: await cancelledTransaction(env.local.dynamodbEndpoint, env.local.region, env.tableName),
    };
  } finally {
    await env.stop();
  }
}

/**
 * A redelivery's cancelled transaction, measured: effectively-once's credit twice for one event,
 * asking for ConsumedCapacity on both. The first is applied (and reports its units), the second is
 * cancelled with ConditionalCheckFailed.
 */
async function cancelledTransaction(
  endpoint: string,
  region: string,
  tableName: string,
): Promise<CancelledTransactionCase> {
  const client = new DynamoDBClient({
    endpoint,
    region,
    credentials: LOCAL_CREDENTIALS,
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      Object.assign(args.input as object, { ReturnConsumedCapacity: 'TOTAL' });
      return next(args);
    },
    { step: 'initialize', name: 'askForConsumedCapacity' },
  );
  const ddb = DynamoDBDocumentClient.from(client);
  let seen: { reported: boolean; code: string } = { reported: false, code: 'none' };
  // Read the raw error before the ledger interprets it.
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
        seen = {
          reported: (error as { ConsumedCapacity?: unknown }).ConsumedCapacity !== undefined,
          code: reasons.map((reason) => reason.Code ?? 'None').join(','),
        };
        throw error;
      }
    },
    { step: 'initialize', name: 'readCancellation' },
  );
  const ledger = { ddb, tableName, mode: 'effectively-once' as const, retention: DEFAULT_RETENTION };
  const message = {
    eventId: 'evt-cancelled',
    runId: `bench-cancelled-${Date.now()}`,
    accountId: 'acct-1',
    amountCents: 100,
    seq: 1,
    createdAt: new Date().toISOString(),
  };
  const delivery = { messageId: 'm-1', receiveCount: 1, requestId: 'r-1', position: 0 };
  await creditAccount(ledger, message, delivery, { idempotent: true });
  const outcome = await creditAccount(
    ledger,
    message,
    { ...delivery, receiveCount: 2 },
    { idempotent: true },
  );
  client.destroy();
  if (outcome !== 'duplicate') throw new Error(`the second credit was ${outcome}, not a duplicate`);
  // The marker and the balance are small items (< 1 KB): 2 units each in a transaction.
  return { consumedCapacityReported: seen.reported, cancellationCode: seen.code, ruleWriteUnits: 4 };
}

import { MODE_NAMES, type Mode } from '../../../contract/topology.js';
import { type EmbeddedEnvironment, startEmbeddedEnvironment } from '../../environments/embedded.js';
import { NO_FAULTS } from '../../local-aws/faults/faults.js';
import { DEFAULTS } from '../../options/declaration.js';
import type { ExperimentConfig } from '../../run/experiment.js';
import type { FloorTarget } from './floor.js';

/**
 * Longer than a default run's: the bench drives five batches per mode at once and batches of up
 * to 100, whose invocations take seconds on DynamoDB Local. No crashes here, so it costs no time.
 */
const BENCH_VISIBILITY_TIMEOUT_SECONDS = 10;

/** The embedded environment of one grid cell: every mode's consumers, no crashes, no faults. */
export function startBenchEnvironment(options: {
  readonly modes?: readonly Mode[];
  readonly batchSize: number;
  readonly concurrency: number;
  readonly meterDynamoDb?: boolean;
  readonly onStatus: (message: string) => void;
}): Promise<EmbeddedEnvironment> {
  return startEmbeddedEnvironment({
    modes: options.modes ?? MODE_NAMES,
    crashRate: 0,
    crashSeed: 'bench',
    batchSize: options.batchSize,
    concurrency: options.concurrency,
    visibilityTimeoutSeconds: BENCH_VISIBILITY_TIMEOUT_SECONDS,
    faults: NO_FAULTS,
    ...(options.meterDynamoDb ? { meterDynamoDb: true } : {}),
    onStatus: options.onStatus,
  });
}

/** One mode's run at the environment's settings: no crashes, no faults. */
export function benchConfig(mode: Mode, messages: number, seed: string): ExperimentConfig {
  return {
    messages,
    accounts: DEFAULTS.accounts,
    crashRate: 0,
    batchSize: undefined,
    seed,
    modes: [mode],
    concurrency: undefined,
    visibilityTimeoutSeconds: BENCH_VISIBILITY_TIMEOUT_SECONDS,
    faults: NO_FAULTS,
  };
}

/** The same DynamoDB Local the consumers write to (the embedded environment's table names). */
export function floorTarget(env: EmbeddedEnvironment): FloorTarget {
  return {
    endpoint: env.local.dynamodbEndpoint,
    region: env.local.region,
    tableName: env.tableName,
    // embedded.ts creates Powertools' table under this name (as the stack does, one per stack).
    idempotencyTableName: 'idempotency',
    ...(env.local.providerUrl ? { providerUrl: env.local.providerUrl } : {}),
  };
}

import { MODE_NAMES, type Mode } from '../../lib/topology.js';
import { DEFAULTS } from '../cli/cli-args.js';
import { type EmbeddedEnvironment, startEmbeddedEnvironment } from '../environments/embedded.js';
import type { ExperimentConfig } from '../experiment/experiment.js';
import { NO_FAULTS } from '../faults/faults.js';
import type { FloorTarget } from './floor.js';

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
    visibilityTimeoutSeconds: DEFAULTS.visibilityTimeoutSeconds,
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
    visibilityTimeoutSeconds: DEFAULTS.visibilityTimeoutSeconds,
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
  };
}

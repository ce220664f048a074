// What an embedded run is told (its options), and the settings each mode runs with under them.
import { resolveModeSettings } from '../../contract/deployment-settings.js';
import { chargeOf, type Mode } from '../../contract/topology.js';
import type { SharedDynamoDb } from '../local-aws/emulators/dynamodb-emulator.js';
import type { FaultSettings } from '../local-aws/faults/faults.js';
import type { EffectiveModeSettings } from './environment.js';
import { LOCAL_MAX_CONCURRENCY, localReceiveMarginSeconds } from './local-timing.js';

export interface EmbeddedOptions {
  readonly modes: readonly Mode[];
  readonly crashRate: number;
  readonly crashSeed: string;
  /** Overrides every mode's batch size. */
  readonly batchSize?: number;
  /** Overrides every mode's maximum concurrency. */
  readonly concurrency?: number;
  /** Deliveries that always crash, `<eventId>@<receiveCount>`: single-message demonstrations. */
  readonly crashAt?: readonly string[];
  /** Overrides every mode's maxReceiveCount. */
  readonly maxReceiveCount?: number;
  /** Faults the local runtime injects (redelivery, throttling, slow and killed invocations). */
  readonly faults?: FaultSettings;
  /**
   * Local visibility timeout. Short, so crashed batches come back quickly; the function timeout is
   * 2 s (plus any batching window) shorter (Lambda's hard rule is visibility ≥ function timeout; the
   * 6× AWS recommendation leaves room for retries that a local run does not need).
   */
  readonly visibilityTimeoutSeconds: number;
  /** Folder for the functions' logs (one file per function). */
  readonly logDir?: string;
  /** Progress messages while starting (emulators, bundling, provisioning). */
  readonly onStatus?: (message: string) => void;
  /**
   * Initialise every function's environments (each mode's maximum concurrency, and the verifier's)
   * before the first message, like provisioned concurrency on AWS; false: every environment
   * cold-starts on its first invocation, as on-demand functions do.
   * @default true
   */
  readonly prewarm?: boolean;
  /**
   * Counts the consumers' DynamoDB requests and consumed capacity per mode and operation through a
   * policy of the consumers' DynamoDB proxy (harness/local-aws/dynamodb-proxy/meter.ts): `local.dynamoDbMeter`.
   * For benchmarks.
   * @default false
   */
  readonly meterDynamoDb?: boolean;
  /**
   * How long the dedupe records remember an event (contract/retention.ts). Short values show a
   * late redrive in seconds; they break the deployed retention rule on purpose.
   * @default the deployed default (30 days)
   */
  readonly markerTtlSeconds?: number;
  /** Whether the consumers that dedupe refuse events older than their records remember. @default true */
  readonly ageGuard?: boolean;
  /**
   * A running DynamoDB Local to create this environment's tables on (prefixed), left running by
   * stop(): test files share one instead of starting a JVM each.
   * @default a DynamoDB Local of its own, stopped with the environment
   */
  readonly dynamodb?: SharedDynamoDb;
}

/** Settings a mode runs with locally: the topology, the run's overrides, and the short local timeouts. */
export function embeddedModeSettings(mode: Mode, options: EmbeddedOptions): EffectiveModeSettings {
  const settings = resolveModeSettings(mode, {
    crashRate: options.crashRate,
    crashSeed: options.crashSeed,
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    ...(options.maxReceiveCount !== undefined ? { maxReceiveCount: options.maxReceiveCount } : {}),
  });
  // A charge mode's record makes two more round trips (the provider takes the key, then charges)
  // before its own transaction, all on the one DynamoDB Local: its invocations take about twice as
  // long (measured in November: 3 s at batch 10 × 2 in flight, which timed out 2 of 200 at the then
  // 3 s function timeout), so twice the time.
  const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds * (chargeOf(mode) ? 2 : 1);
  const concurrency = options.concurrency ?? LOCAL_MAX_CONCURRENCY;
  return {
    batchSize: settings.batchSize,
    maxBatchingWindowSeconds: settings.maxBatchingWindowSeconds,
    maxConcurrency: concurrency,
    visibilityTimeoutSeconds,
    // The visibility clock starts at the receive; the function's at the invocation, after the
    // batching window and a possible cold start. Keep the timeout far enough inside the visibility
    // timeout that a slow invocation is killed before its messages can come back under it.
    functionTimeoutSeconds: Math.max(
      1,
      Math.min(
        settings.functionTimeoutSeconds,
        visibilityTimeoutSeconds -
          settings.maxBatchingWindowSeconds -
          localReceiveMarginSeconds({
            prewarm: options.prewarm ?? true,
            count: concurrency * options.modes.length,
          }),
      ),
    ),
    maxReceiveCount: settings.maxReceiveCount,
  };
}

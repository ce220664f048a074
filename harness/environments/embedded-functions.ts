// The embedded run's local Lambda side: function specs, consumers and their mappings, the verifier, prewarm.
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  consumerEnvironment,
  type PaymentProviderValues,
  verifierEnvironment,
} from '../../contract/function-environment.js';
import { DEFAULT_RETENTION } from '../../contract/retention.js';
import { isFifoMode, MODES, type Mode, VERIFIER } from '../../contract/topology.js';
import type { Bundles } from '../local-aws/bundling/bundle.js';
import { NO_FAULTS } from '../local-aws/faults/faults.js';
import { LocalEventSourceMapping } from '../local-aws/lambda-runtime/event-source-mapping.js';
import type { FunctionSpec } from '../local-aws/lambda-runtime/execution-environment.js';
import { LocalFunction } from '../local-aws/lambda-runtime/local-function.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local-aws/local-identity.js';
import { allOrFirstError } from './all-or-first-error.js';
import type { DataPath, Endpoints } from './embedded-emulators.js';
import type { EmbeddedOptions } from './embedded-options.js';
import type { EffectiveModeSettings, LiveModeStats } from './environment.js';
import type { ProvisionedQueues, StackTableNames } from './provision.js';
import type { Teardown } from './teardown.js';

export type SpecOf = (
  name: string,
  timeoutSeconds: number,
  memoryMb: number,
  environment: Record<string, string>,
) => FunctionSpec;

/** Step 5: how a function is described to the local Lambda service: its bundle, environment and log file. */
export function functionSpecs(input: {
  readonly bundles: Bundles;
  readonly emulators: Endpoints;
  readonly dataPath: DataPath;
  readonly logDir: string | undefined;
  readonly teardown: Teardown;
}): SpecOf {
  const sdkEnvironment = {
    AWS_REGION: LOCAL_REGION,
    AWS_DEFAULT_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_SQS: input.emulators.sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: input.emulators.dynamodbEndpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    LOCAL_LAMBDA_RESOLVE_LOCALHOST: '1',
  };
  const logSink = (name: string) => {
    if (!input.logDir) return undefined;
    mkdirSync(input.logDir, { recursive: true });
    const stream = createWriteStream(join(input.logDir, `${name}.log`));
    // Losing a log line must never take the experiment down.
    stream.on('error', () => undefined);
    input.teardown.add(() => new Promise((resolve) => stream.end(resolve)));
    return stream;
  };
  return (name, timeoutSeconds, memoryMb, environment) => {
    const sink = logSink(name);
    const bundlePath = input.bundles.handlers[name];
    if (!bundlePath) throw new Error(`no bundle for ${name}`);
    const consumerEndpoint = name === 'verifier' ? undefined : input.dataPath.consumerEndpoint;
    return {
      name,
      bundlePath,
      workerPath: input.bundles.worker,
      timeoutMs: timeoutSeconds * 1000,
      memoryMb,
      environment: {
        ...sdkEnvironment,
        ...environment,
        ...(consumerEndpoint ? { AWS_ENDPOINT_URL_DYNAMODB: consumerEndpoint } : {}),
      },
      ...(sink ? { logSink: sink } : {}),
    };
  };
}

export interface Consumers {
  readonly functions: ReadonlyMap<Mode, LocalFunction>;
  readonly mappings: ReadonlyMap<Mode, LocalEventSourceMapping>;
  /** A fatal problem seen by a mapping (a handler that cannot initialise), if any. */
  readonly fatalError: () => Error | undefined;
  /** Every mapping starts polling. */
  readonly start: () => void;
}

/** Step 6: per selected mode, its function and the event source mapping that feeds it; start() polls. */
export function createConsumers(
  options: EmbeddedOptions,
  input: {
    readonly modeSettings: Record<Mode, EffectiveModeSettings>;
    readonly queues: Record<Mode, ProvisionedQueues>;
    readonly sqs: SQSClient;
    readonly specOf: SpecOf;
    readonly tables: StackTableNames;
    readonly provider?: PaymentProviderValues;
  },
  teardown: Teardown,
): Consumers {
  const faults = options.faults ?? NO_FAULTS;
  let fatal: Error | undefined;
  const functions = new Map<Mode, LocalFunction>();
  const mappings = new Map<Mode, LocalEventSourceMapping>();
  for (const mode of options.modes) {
    const settings = input.modeSettings[mode];
    const queue = input.queues[mode];
    const fn = new LocalFunction(
      input.specOf(
        mode,
        settings.functionTimeoutSeconds,
        MODES[mode].memoryMb,
        consumerEnvironment(MODES[mode], {
          tableName: input.tables.ledger,
          queueUrl: queue.queueUrl,
          crashRate: options.crashRate,
          crashSeed: options.crashSeed,
          ...(options.crashAt ? { crashAt: options.crashAt } : {}),
          idempotencyTableName: input.tables.idempotency,
          markerTtlSeconds: options.markerTtlSeconds ?? DEFAULT_RETENTION.markerTtlSeconds,
          ageGuard: options.ageGuard ?? true,
          ...(input.provider ? { provider: input.provider } : {}),
        }),
      ),
    );
    const mapping = new LocalEventSourceMapping({
      sqs: input.sqs,
      queueUrl: queue.queueUrl,
      queueArn: queue.queueArn,
      region: LOCAL_REGION,
      fn,
      batchSize: settings.batchSize,
      maxBatchingWindowMs: settings.maxBatchingWindowSeconds * 1000,
      maxConcurrency: settings.maxConcurrency,
      reportBatchItemFailures: MODES[mode].reportBatchItemFailures,
      fifo: isFifoMode(mode),
      visibilityTimeoutMs: settings.visibilityTimeoutSeconds * 1000,
      faults: {
        seed: options.crashSeed,
        redeliveryRate: faults.redeliveryRate,
        killRate: faults.killRate,
        workDelayMs: faults.workDelayMs,
        workDelayRate: faults.workDelayRate,
      },
      onFatal: (error) => {
        fatal ??= error;
      },
    });
    functions.set(mode, fn);
    mappings.set(mode, mapping);
  }
  const stopAll = async (items: Iterable<{ stop(): Promise<void> }>) => {
    await Promise.all([...items].map((item) => item.stop()));
  };
  // Undone last first: every poller stops (in parallel) before any function does.
  teardown.add(() => stopAll(functions.values()));
  teardown.add(() => stopAll(mappings.values()));
  return {
    functions,
    mappings,
    fatalError: () => fatal,
    start: () => {
      for (const mapping of mappings.values()) mapping.start();
    },
  };
}

/** The verifier, as its own function reading the ledger, the DLQs and the provider's table. */
export function createVerifier(input: {
  readonly specOf: SpecOf;
  readonly tables: StackTableNames;
  readonly deadLetterQueueUrls: Readonly<Record<Mode, string>>;
  readonly teardown: Teardown;
}): LocalFunction {
  const verifier = new LocalFunction(
    input.specOf(
      'verifier',
      VERIFIER.functionTimeoutSeconds,
      VERIFIER.memoryMb,
      // fauxqs keeps one copy of each queue: an empty short poll ends the DLQ sweep at once.
      verifierEnvironment({
        tableName: input.tables.ledger,
        deadLetterQueueUrls: input.deadLetterQueueUrls,
        dlqSweepWaitSeconds: 0,
        providerTableName: input.tables.provider,
      }),
    ),
  );
  input.teardown.add(() => verifier.stop());
  return verifier;
}

/**
 * Every consumer's maximum concurrency in environments, and the verifier's one, initialised before
 * the first message, like provisioned concurrency: a run does not begin with 20 processes loading
 * their bundles at once on a small machine. A replacement after a crash still cold-starts.
 */
export async function prewarmFunctions(
  consumers: Consumers,
  modeSettings: Record<Mode, EffectiveModeSettings>,
  verifier: LocalFunction,
): Promise<void> {
  await allOrFirstError([
    ...[...consumers.functions].map(([mode, fn]) => fn.prewarm(modeSettings[mode].maxConcurrency)),
    verifier.prewarm(1),
  ]);
}

/** What the local runtime saw of a mode, live: the mapping's, the function's and the fault policy's counts. */
export function liveStatsOf(consumers: Consumers, dataPath: DataPath, mode: Mode): LiveModeStats {
  const mapping = consumers.mappings.get(mode);
  const fn = consumers.functions.get(mode);
  const proxied = dataPath.faults?.stats.byMode[mode];
  const timeline = mapping?.timeline.snapshot();
  return {
    deliveries: mapping?.stats.deliveries ?? 0,
    acknowledged: mapping?.stats.acknowledged ?? 0,
    inFlight: mapping?.stats.inFlight ?? 0,
    crashes: fn?.stats.exits ?? 0,
    timeouts: fn?.stats.timeouts ?? 0,
    slowestInvocationMs: fn?.stats.slowestInvocationMs ?? 0,
    coldStarts: fn?.stats.coldStarts ?? 0,
    prewarmed: fn?.stats.prewarmed ?? 0,
    slowestInitMs: fn?.stats.slowestInitMs ?? 0,
    visibilityOverruns: mapping?.stats.visibilityOverruns ?? 0,
    injected: {
      redelivered: mapping?.stats.redelivered ?? 0,
      kills: fn?.stats.injectedKills ?? 0,
      slowInvocations: mapping?.stats.slowInvocations ?? 0,
      throttled: proxied?.throttled ?? 0,
      serverErrors: proxied?.serverErrors ?? 0,
      lostResponses: proxied?.lostResponses ?? 0,
      conflicts: proxied?.conflicts ?? 0,
      outageRejections: proxied?.outageRejections ?? 0,
    },
    ...(timeline ? { timeline } : {}),
    ...(mapping ? { rounds: mapping.rounds.snapshot() } : {}),
  };
}

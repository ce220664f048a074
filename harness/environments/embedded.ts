import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { VerifierResult } from '../../functions/verifier.js';
import { resolveModeSettings } from '../../lib/deployment-settings.js';
import { consumerEnvironment, verifierEnvironment } from '../../lib/function-environment.js';
import { MODE_NAMES, MODES, type Mode, VERIFIER } from '../../lib/topology.js';
import { type RequestMeterStats, startRequestMeter } from '../benchmarks/request-meter.js';
import { type Bundles, bundleHandlers } from '../bundle.js';
import { type RunningEmulators, startEmulators } from '../emulators/index.js';
import { type RunningDynamoDbFaultProxy, startDynamoDbFaultProxy } from '../faults/dynamodb-fault-proxy.js';
import { type FaultSettings, NO_FAULTS } from '../faults/faults.js';
import { LocalEventSourceMapping } from '../lambda-runtime/event-source-mapping.js';
import type { FunctionSpec } from '../lambda-runtime/execution-environment.js';
import { type FunctionStats, LocalFunction } from '../lambda-runtime/local-function.js';
import type {
  EffectiveModeSettings,
  ExperimentEnvironment,
  LiveModeStats,
  VerifierInvocation,
} from './environment.js';
import { createIdempotencyTable, createLedgerTable, createModeQueues } from './provision.js';
import { readQueueDepth } from './queue-depth.js';

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
   * Counts the consumers' DynamoDB requests and consumed capacity per mode and operation through a
   * pass-through proxy (harness/benchmarks/request-meter.ts): `local.dynamoDbMeter`. For benchmarks.
   * @default false
   */
  readonly meterDynamoDb?: boolean;
}

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const TABLE_NAME = 'ledger';
const IDEMPOTENCY_TABLE_NAME = 'idempotency';

/** Settings a mode runs with locally: the topology, the run's overrides, and the short local timeouts. */
export function embeddedModeSettings(mode: Mode, options: EmbeddedOptions): EffectiveModeSettings {
  const settings = resolveModeSettings(mode, {
    crashRate: options.crashRate,
    crashSeed: options.crashSeed,
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    ...(options.maxReceiveCount !== undefined ? { maxReceiveCount: options.maxReceiveCount } : {}),
  });
  return {
    batchSize: settings.batchSize,
    maxBatchingWindowSeconds: settings.maxBatchingWindowSeconds,
    maxConcurrency: options.concurrency ?? settings.maxConcurrency,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    // The visibility clock starts at the receive; the function's at the invocation, after the
    // batching window and a possible cold start. Keep the timeout far enough inside the visibility
    // timeout that a slow invocation is killed before its messages can come back under it.
    functionTimeoutSeconds: Math.max(
      1,
      Math.min(
        settings.functionTimeoutSeconds,
        options.visibilityTimeoutSeconds - settings.maxBatchingWindowSeconds - 2,
      ),
    ),
    maxReceiveCount: settings.maxReceiveCount,
  };
}

/**
 * Everything on this machine: fauxqs (SQS) in this process, DynamoDB Local in a Java process, and
 * the real handler bundles in child processes fed by a local event source mapping per mode.
 */
export interface EmbeddedEnvironment extends ExperimentEnvironment {
  /** Where the emulators listen and what was created, for tools that drive the same resources. */
  readonly local: {
    readonly sqsEndpoint: string;
    readonly dynamodbEndpoint: string;
    readonly region: string;
    readonly deadLetterQueueUrls: Readonly<Record<Mode, string>>;
    /** DynamoDB Local's Java process, for peak-memory readings. */
    readonly dynamodbPid: number;
    /** The local Lambda service's counters per mode (invocations, billed duration, …). */
    functionStats(mode: Mode): Readonly<FunctionStats> | undefined;
    /** The consumers' DynamoDB requests, when started with `meterDynamoDb`; `reset()` between runs. */
    readonly dynamoDbMeter?: { readonly stats: RequestMeterStats; reset(): void };
  };
}

export async function startEmbeddedEnvironment(options: EmbeddedOptions): Promise<EmbeddedEnvironment> {
  const status = options.onStatus ?? (() => undefined);
  const cleanups: Array<() => Promise<void>> = [];
  // Undone one step at a time, last first: all pollers stop (in parallel), then all functions,
  // then the clients, emulators and bundles they used. Stopping twice waits for the first stop.
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      const failures: unknown[] = [];
      for (let cleanup = cleanups.pop(); cleanup; cleanup = cleanups.pop()) {
        await cleanup().catch((error: unknown) => failures.push(error));
      }
      if (failures.length > 0)
        throw new AggregateError(failures, 'embedded environment did not stop cleanly');
    })();
    return stopping;
  };

  try {
    status('starting SQS (fauxqs) and DynamoDB Local, bundling handlers');
    // allSettled, not all: if one start fails, the other must still be registered for cleanup.
    const [emulatorsStarted, bundlesBuilt] = await Promise.allSettled([
      startEmulators(),
      bundleHandlers([...options.modes, 'verifier']),
    ]);
    if (emulatorsStarted.status === 'fulfilled') cleanups.push(() => emulatorsStarted.value.stop());
    if (bundlesBuilt.status === 'fulfilled') cleanups.push(() => bundlesBuilt.value.dispose());
    if (emulatorsStarted.status === 'rejected') throw emulatorsStarted.reason;
    if (bundlesBuilt.status === 'rejected') throw bundlesBuilt.reason;
    const emulators: RunningEmulators = emulatorsStarted.value;
    const bundles: Bundles = bundlesBuilt.value;

    const sqs = new SQSClient({ region: REGION, credentials: CREDENTIALS, endpoint: emulators.sqsEndpoint });
    const dynamodb = new DynamoDBClient({
      region: REGION,
      credentials: CREDENTIALS,
      endpoint: emulators.dynamodbEndpoint,
    });
    const ddb = DynamoDBDocumentClient.from(dynamodb);
    cleanups.push(async () => {
      sqs.destroy();
      dynamodb.destroy();
    });

    status('creating queues and the ledger table from the topology');
    await createLedgerTable(dynamodb, TABLE_NAME);
    // As in the stack: one table for the modes that keep Powertools' idempotency records.
    await createIdempotencyTable(dynamodb, IDEMPOTENCY_TABLE_NAME);
    // Every mode's queues exist, as in the stack; only the selected modes get consumers.
    const modeSettings = Object.fromEntries(
      MODE_NAMES.map((mode) => [mode, embeddedModeSettings(mode, options)]),
    ) as Record<Mode, EffectiveModeSettings>;
    const queues = Object.fromEntries(
      await Promise.all(
        MODE_NAMES.map(async (mode) => [mode, await createModeQueues(sqs, mode, modeSettings[mode])]),
      ),
    ) as Record<Mode, Awaited<ReturnType<typeof createModeQueues>>>;

    // Throttling and lost responses come from a proxy that only the consumers talk to: the harness
    // and the verifier read the real emulator, and the handler code stays what is deployed.
    const faults = options.faults ?? NO_FAULTS;
    let faultProxy: RunningDynamoDbFaultProxy | undefined;
    if (faults.throttleRate > 0) {
      const proxy = await startDynamoDbFaultProxy({
        target: emulators.dynamodbEndpoint,
        seed: options.crashSeed,
        rate: faults.throttleRate,
      });
      cleanups.push(() => proxy.stop());
      faultProxy = proxy;
    }
    // In front of the fault proxy, if any, so it counts what the handlers sent.
    const meter = options.meterDynamoDb
      ? await startRequestMeter({ target: faultProxy?.endpoint ?? emulators.dynamodbEndpoint })
      : undefined;
    if (meter) cleanups.push(() => meter.stop());
    const consumerDynamoDbEndpoint = meter?.endpoint ?? faultProxy?.endpoint;

    const sdkEnvironment = {
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_SQS: emulators.sqsEndpoint,
      AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodbEndpoint,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'INFO',
      LOCAL_LAMBDA_RESOLVE_LOCALHOST: '1',
    };
    const logSink = (name: string): WriteStream | undefined => {
      if (!options.logDir) return undefined;
      mkdirSync(options.logDir, { recursive: true });
      const stream = createWriteStream(join(options.logDir, `${name}.log`));
      // Losing a log line must never take the experiment down.
      stream.on('error', () => undefined);
      cleanups.push(() => new Promise((resolve) => stream.end(resolve)));
      return stream;
    };
    const spec = (
      name: string,
      timeoutSeconds: number,
      memoryMb: number,
      environment: Record<string, string>,
    ) => {
      const sink = logSink(name);
      const bundlePath = bundles.handlers[name];
      if (!bundlePath) throw new Error(`no bundle for ${name}`);
      return {
        name,
        bundlePath,
        workerPath: bundles.worker,
        timeoutMs: timeoutSeconds * 1000,
        memoryMb,
        environment: {
          ...sdkEnvironment,
          ...environment,
          ...(consumerDynamoDbEndpoint && name !== 'verifier'
            ? { AWS_ENDPOINT_URL_DYNAMODB: consumerDynamoDbEndpoint }
            : {}),
        },
        ...(sink ? { logSink: sink } : {}),
      } satisfies FunctionSpec;
    };

    let fatal: Error | undefined;
    const mappings = new Map<Mode, LocalEventSourceMapping>();
    const functions = new Map<Mode, LocalFunction>();
    for (const mode of options.modes) {
      const settings = modeSettings[mode];
      const fn = new LocalFunction(
        spec(
          mode,
          settings.functionTimeoutSeconds,
          MODES[mode].memoryMb,
          consumerEnvironment(MODES[mode], {
            tableName: TABLE_NAME,
            queueUrl: queues[mode].queueUrl,
            crashRate: options.crashRate,
            crashSeed: options.crashSeed,
            ...(options.crashAt ? { crashAt: options.crashAt } : {}),
            idempotencyTableName: IDEMPOTENCY_TABLE_NAME,
          }),
        ),
      );
      const mapping = new LocalEventSourceMapping({
        sqs,
        queueUrl: queues[mode].queueUrl,
        queueArn: queues[mode].queueArn,
        region: REGION,
        fn,
        batchSize: settings.batchSize,
        maxBatchingWindowMs: settings.maxBatchingWindowSeconds * 1000,
        maxConcurrency: settings.maxConcurrency,
        reportBatchItemFailures: MODES[mode].reportBatchItemFailures,
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
    cleanups.push(() => stopAll(functions.values()));
    cleanups.push(() => stopAll(mappings.values()));
    for (const mapping of mappings.values()) mapping.start();

    const allDeadLetterQueueUrls = Object.fromEntries(
      MODE_NAMES.map((mode) => [mode, queues[mode].deadLetterQueueUrl]),
    ) as Record<Mode, string>;
    const verifier = new LocalFunction(
      spec(
        'verifier',
        VERIFIER.functionTimeoutSeconds,
        VERIFIER.memoryMb,
        verifierEnvironment({ tableName: TABLE_NAME, deadLetterQueueUrls: allDeadLetterQueueUrls }),
      ),
    );
    cleanups.push(() => verifier.stop());

    return {
      description: {
        target: 'embedded',
        crashRate: options.crashRate,
        crashSeed: options.crashSeed,
        modes: modeSettings,
      },
      modes: options.modes,
      sqs,
      ddb,
      tableName: TABLE_NAME,
      // The local runtime reports its own in-flight invocations, so a short quiet period is enough.
      drainPolicy: { pollMs: 250, stablePolls: 3 },
      queueUrl: (mode) => queues[mode].queueUrl,
      queueDepth: (mode) => readQueueDepth(sqs, queues[mode].queueUrl),
      liveStats: (mode): LiveModeStats => {
        const mapping = mappings.get(mode);
        const fn = functions.get(mode);
        const proxied = faultProxy?.stats.byMode[mode];
        const timeline = mapping?.timeline.snapshot();
        return {
          deliveries: mapping?.stats.deliveries ?? 0,
          acknowledged: mapping?.stats.acknowledged ?? 0,
          inFlight: mapping?.stats.inFlight ?? 0,
          crashes: fn?.stats.exits ?? 0,
          timeouts: fn?.stats.timeouts ?? 0,
          slowestInvocationMs: fn?.stats.slowestInvocationMs ?? 0,
          coldStarts: fn?.stats.coldStarts ?? 0,
          visibilityOverruns: mapping?.stats.visibilityOverruns ?? 0,
          injected: {
            redelivered: mapping?.stats.redelivered ?? 0,
            kills: fn?.stats.injectedKills ?? 0,
            slowInvocations: mapping?.stats.slowInvocations ?? 0,
            throttled: proxied?.throttled ?? 0,
            serverErrors: proxied?.serverErrors ?? 0,
            lostResponses: proxied?.lostResponses ?? 0,
            conflicts: proxied?.conflicts ?? 0,
          },
          ...(timeline ? { timeline } : {}),
        };
      },
      invokeVerifier: async (runId, modes, verifierOptions = {}): Promise<VerifierInvocation> => {
        const result = await verifier.invoke({ runId, modes, ...verifierOptions });
        if (result.status === 'error')
          throw new Error(`verifier failed (${result.errorType}): ${result.message}`);
        return { result: result.response as VerifierResult, peakRssKb: result.maxRssKb };
      },
      fatalError: () => fatal,
      stop,
      local: {
        sqsEndpoint: emulators.sqsEndpoint,
        dynamodbEndpoint: emulators.dynamodbEndpoint,
        region: REGION,
        deadLetterQueueUrls: allDeadLetterQueueUrls,
        dynamodbPid: emulators.dynamodbPid,
        functionStats: (mode) => functions.get(mode)?.stats,
        ...(meter ? { dynamoDbMeter: meter } : {}),
      },
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { resolveModeSettings } from '../../contract/deployment-settings.js';
import {
  consumerEnvironment,
  type PaymentProviderValues,
  verifierEnvironment,
} from '../../contract/function-environment.js';
import { DEFAULT_RETENTION } from '../../contract/retention.js';
import { chargeOf, isFifoMode, MODE_NAMES, MODES, type Mode, VERIFIER } from '../../contract/topology.js';
import type { VerifierResult } from '../../verifier/verifier.js';
import { type Bundles, bundleHandlers } from '../local-aws/bundling/bundle.js';
import { type FaultPolicy, faultPolicy } from '../local-aws/dynamodb-proxy/faults.js';
import { type DynamoDbMeterStats, type MeterPolicy, meterPolicy } from '../local-aws/dynamodb-proxy/meter.js';
import { type ProxyPolicy, startDynamoDbProxy } from '../local-aws/dynamodb-proxy/proxy.js';
import {
  reserveLoopbackPort,
  type SharedDynamoDb,
  startDynamoDbEmulator,
} from '../local-aws/emulators/dynamodb-emulator.js';
import { startPaymentProvider } from '../local-aws/emulators/payment-provider.js';
import { startSqsEmulator } from '../local-aws/emulators/sqs-emulator.js';
import { type FaultSettings, NO_FAULTS } from '../local-aws/faults/faults.js';
import { LocalEventSourceMapping } from '../local-aws/lambda-runtime/event-source-mapping.js';
import type { FunctionSpec } from '../local-aws/lambda-runtime/execution-environment.js';
import { type FunctionStats, LocalFunction } from '../local-aws/lambda-runtime/local-function.js';
import type {
  EffectiveModeSettings,
  ExperimentEnvironment,
  LiveModeStats,
  VerifierInvocation,
} from './environment.js';
import { LOCAL_MAX_CONCURRENCY } from './local-timing.js';
import {
  createModeQueues,
  createStackTables,
  type ProvisionedQueues,
  type StackTableNames,
  stackTableNames,
} from './provision.js';
import { readQueueDepth } from './queue-depth.js';
import { redriveByCopy } from './redrive.js';
import { Teardown } from './teardown.js';

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

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** The stand-in payment provider, as its own process with its own table (on the same DynamoDB Local). */
async function startProvider(
  dynamodbEndpoint: string,
  port: number,
  tableName: string,
  logDir: string | undefined,
  teardown: Teardown,
): Promise<void> {
  await teardown.whenStarted(
    startPaymentProvider({
      dynamodbEndpoint,
      port,
      tableName,
      ...(logDir ? { logFile: join(logDir, 'payment-provider.log') } : {}),
    }),
  );
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
  // long (measured: 3 s, the local function timeout, at batch 10 × 2 in flight), so twice the time.
  const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds * (chargeOf(mode) ? 2 : 1);
  return {
    batchSize: settings.batchSize,
    maxBatchingWindowSeconds: settings.maxBatchingWindowSeconds,
    maxConcurrency: options.concurrency ?? LOCAL_MAX_CONCURRENCY,
    visibilityTimeoutSeconds,
    // The visibility clock starts at the receive; the function's at the invocation, after the
    // batching window and a possible cold start. Keep the timeout far enough inside the visibility
    // timeout that a slow invocation is killed before its messages can come back under it.
    functionTimeoutSeconds: Math.max(
      1,
      Math.min(
        settings.functionTimeoutSeconds,
        visibilityTimeoutSeconds - settings.maxBatchingWindowSeconds - 2,
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
    /** DynamoDB Local's Java process, for peak-memory readings; absent on a shared one. */
    readonly dynamodbPid?: number;
    /** The stand-in payment provider, when the environment runs a charge mode. */
    readonly providerUrl?: string;
    /** The local Lambda service's counters per mode (invocations, billed duration, …). */
    functionStats(mode: Mode): Readonly<FunctionStats> | undefined;
    /** The consumers' DynamoDB requests, when started with `meterDynamoDb`; `reset()` between runs. */
    readonly dynamoDbMeter?: { readonly stats: DynamoDbMeterStats; reset(): void };
  };
}

/**
 * Starts everything, one step after the other where a step needs the one before; the JVM of
 * DynamoDB Local, the long pole, starts first and the rest happens while it does. Every step
 * registers how to undo itself, so a failure at any step (or a later stop()) undoes what was
 * started, last first.
 */
export async function startEmbeddedEnvironment(options: EmbeddedOptions): Promise<EmbeddedEnvironment> {
  const status = options.onStatus ?? (() => undefined);
  const teardown = new Teardown('embedded environment did not stop cleanly');
  try {
    status('starting SQS (fauxqs) and DynamoDB Local, bundling handlers');
    const tables = stackTableNames(options.dynamodb?.tablePrefix);
    const { emulators, dynamodbReady, bundles } = await startEmulatorsAndBundles(
      options.modes,
      options.dynamodb,
      teardown,
    );
    const clients = connectClients(emulators, teardown);

    status('creating queues and the ledger table from the topology');
    const modeSettings = Object.fromEntries(
      MODE_NAMES.map((mode) => [mode, embeddedModeSettings(mode, options)]),
    ) as Record<Mode, EffectiveModeSettings>;
    const queues = await createQueues(clients.sqs, modeSettings);
    const dataPath = await startDataPathProxies(options, emulators.dynamodbEndpoint, teardown);
    const specOf = functionSpecs({ bundles, emulators, dataPath, logDir: options.logDir, teardown });

    // The payment provider is its own service with its own table; only a run with a charge mode
    // needs it. Its port is reserved now so the consumers can be told its URL before it starts.
    const providerPort = options.modes.some((mode) => chargeOf(mode))
      ? await reserveLoopbackPort()
      : undefined;
    const provider =
      providerPort === undefined
        ? undefined
        : {
            url: `http://127.0.0.1:${providerPort}`,
            sign: false,
            lostResponseRate: options.faults?.providerLostResponseRate ?? 0,
          };
    const consumers = createConsumers(
      options,
      { modeSettings, queues, sqs: clients.sqs, specOf, tables, ...(provider ? { provider } : {}) },
      teardown,
    );
    const deadLetterQueueUrls = Object.fromEntries(
      MODE_NAMES.map((mode) => [mode, queues[mode].deadLetterQueueUrl]),
    ) as Record<Mode, string>;
    const verifier = new LocalFunction(
      specOf(
        'verifier',
        VERIFIER.functionTimeoutSeconds,
        VERIFIER.memoryMb,
        // fauxqs keeps one copy of each queue: an empty short poll ends the DLQ sweep at once.
        verifierEnvironment({
          tableName: tables.ledger,
          deadLetterQueueUrls,
          dlqSweepWaitSeconds: 0,
          providerTableName: tables.provider,
        }),
      ),
    );
    teardown.add(() => verifier.stop());

    const prewarm = options.prewarm ?? true;
    if (prewarm) {
      const consumers = options.modes.reduce((sum, mode) => sum + modeSettings[mode].maxConcurrency, 0);
      status(
        `initialising ${consumers + 1} execution environments (prewarm: ${consumers} for the consumers, 1 for the verifier) while DynamoDB Local starts`,
      );
    }
    // The handlers touch no AWS service at module scope, so their environments can start before
    // DynamoDB Local answers; the tables need it.
    const { pid: dynamodbPid } = await allOrFirstError([
      dynamodbReady.then(async (dynamodb) => {
        // The provider's process runs only for a run with a charge mode; its table always exists.
        await createStackTables(clients.dynamodb, tables);
        if (providerPort !== undefined) {
          await startProvider(
            emulators.dynamodbEndpoint,
            providerPort,
            tables.provider,
            options.logDir,
            teardown,
          );
        }
        return dynamodb;
      }),
      prewarm ? prewarmFunctions(consumers, modeSettings, verifier) : Promise.resolve(),
    ]).then(([dynamodb]) => dynamodb);
    consumers.start();

    return {
      description: {
        target: 'embedded',
        crashRate: options.crashRate,
        crashSeed: options.crashSeed,
        modes: modeSettings,
      },
      modes: options.modes,
      sqs: clients.sqs,
      ddb: clients.ddb,
      tableName: tables.ledger,
      // The local runtime reports its own in-flight invocations, so a short quiet period is enough.
      drainPolicy: { pollMs: 250, stablePolls: 3 },
      queueUrl: (mode) => queues[mode].queueUrl,
      queueDepth: (mode) => readQueueDepth(clients.sqs, queues[mode].queueUrl),
      deadLetterQueueDepth: (mode) => readQueueDepth(clients.sqs, queues[mode].deadLetterQueueUrl),
      // fauxqs has no message move task: the harness moves the messages itself, as SQS would.
      redrive: (mode) => redriveByCopy(clients.sqs, queues[mode].deadLetterQueueUrl, queues[mode].queueUrl),
      onProduceStart: () => dataPath.faults?.startClock(),
      liveStats: (mode) => liveStatsOf(consumers, dataPath, mode),
      invokeVerifier: async (runId, modes, verifierOptions = {}): Promise<VerifierInvocation> => {
        const result = await verifier.invoke({ runId, modes, ...verifierOptions });
        if (result.status === 'error')
          throw new Error(`verifier failed (${result.errorType}): ${result.message}`);
        return { result: result.response as VerifierResult, peakRssKb: result.maxRssKb };
      },
      fatalError: consumers.fatalError,
      stop: () => teardown.run(),
      local: {
        sqsEndpoint: emulators.sqsEndpoint,
        dynamodbEndpoint: emulators.dynamodbEndpoint,
        region: REGION,
        deadLetterQueueUrls,
        ...(dynamodbPid !== undefined ? { dynamodbPid } : {}),
        ...(provider ? { providerUrl: provider.url } : {}),
        functionStats: (mode) => consumers.functions.get(mode)?.stats,
        ...(dataPath.meter ? { dynamoDbMeter: dataPath.meter } : {}),
      },
    };
  } catch (error) {
    await teardown.run().catch(() => undefined);
    throw error;
  }
}

/** Like Promise.all, but waits for every promise to settle first, so nothing still runs when it throws. */
async function allOrFirstError<T extends readonly unknown[]>(
  promises: { readonly [K in keyof T]: Promise<T[K]> },
): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

interface Endpoints {
  readonly sqsEndpoint: string;
  readonly dynamodbEndpoint: string;
}

/**
 * Step 1: fauxqs (in this process, ready at once), the handler bundles, and DynamoDB Local's JVM
 * (unless a shared one is given), whose endpoint is known before it answers: the caller goes on
 * while `dynamodbReady` is pending.
 */
async function startEmulatorsAndBundles(
  modes: readonly Mode[],
  shared: SharedDynamoDb | undefined,
  teardown: Teardown,
): Promise<{ emulators: Endpoints; dynamodbReady: Promise<{ readonly pid?: number }>; bundles: Bundles }> {
  const port = shared ? undefined : await reserveLoopbackPort();
  const dynamodbReady: Promise<{ readonly pid?: number }> =
    port === undefined ? Promise.resolve({}) : teardown.whenStarted(startDynamoDbEmulator({ port }));
  const bundling = bundleHandlers([...modes, 'verifier']);
  teardown.add(async () => {
    await (await bundling.catch(() => undefined))?.dispose();
  });
  const [sqs, bundles] = await allOrFirstError([teardown.whenStarted(startSqsEmulator()), bundling]);
  return {
    emulators: {
      sqsEndpoint: sqs.endpoint,
      dynamodbEndpoint: shared?.endpoint ?? `http://127.0.0.1:${port}`,
    },
    dynamodbReady,
    bundles,
  };
}

interface Clients {
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly ddb: DynamoDBDocumentClient;
}

/** Step 2: the harness's own clients (the producer, the drain-wait, the verifier's caller). */
function connectClients(emulators: Endpoints, teardown: Teardown): Clients {
  const sqs = new SQSClient({ region: REGION, credentials: CREDENTIALS, endpoint: emulators.sqsEndpoint });
  const dynamodb = new DynamoDBClient({
    region: REGION,
    credentials: CREDENTIALS,
    endpoint: emulators.dynamodbEndpoint,
  });
  teardown.add(async () => {
    sqs.destroy();
    dynamodb.destroy();
  });
  return { sqs, dynamodb, ddb: DynamoDBDocumentClient.from(dynamodb) };
}

/** Step 3: every mode's queues, as the stack creates them; only selected modes get consumers. */
async function createQueues(
  sqs: SQSClient,
  modeSettings: Record<Mode, EffectiveModeSettings>,
): Promise<Record<Mode, ProvisionedQueues>> {
  return Object.fromEntries(
    await Promise.all(
      MODE_NAMES.map(async (mode) => [mode, await createModeQueues(sqs, mode, modeSettings[mode])]),
    ),
  ) as Record<Mode, ProvisionedQueues>;
}

/**
 * Every consumer's maximum concurrency in environments, and the verifier's one, initialised before
 * the first message, like provisioned concurrency: a run does not begin with 20 processes loading
 * their bundles at once on a small machine. A replacement after a crash still cold-starts.
 */
async function prewarmFunctions(
  consumers: Consumers,
  modeSettings: Record<Mode, EffectiveModeSettings>,
  verifier: LocalFunction,
): Promise<void> {
  await allOrFirstError([
    ...[...consumers.functions].map(([mode, fn]) => fn.prewarm(modeSettings[mode].maxConcurrency)),
    verifier.prewarm(1),
  ]);
}

interface DataPath {
  readonly faults?: FaultPolicy;
  readonly meter?: MeterPolicy;
  /** Where the consumers send DynamoDB requests, when not straight to the emulator. */
  readonly consumerEndpoint?: string;
}

/**
 * Step 4: what stands between the consumers and DynamoDB Local, if anything: one proxy that only
 * the consumers talk to (the harness and the verifier read the emulator itself, and the handler
 * code stays what is deployed), with throttling, lost responses and the outage window as one
 * policy and the benchmark's meter as another, first, so it counts what the handlers sent.
 */
async function startDataPathProxies(
  options: EmbeddedOptions,
  dynamodbEndpoint: string,
  teardown: Teardown,
): Promise<DataPath> {
  const settings = options.faults ?? NO_FAULTS;
  const faults =
    settings.throttleRate > 0 || settings.outage !== undefined
      ? faultPolicy({ seed: options.crashSeed, rate: settings.throttleRate, outage: settings.outage })
      : undefined;
  const meter = options.meterDynamoDb ? meterPolicy() : undefined;
  // Outermost first: the meter sees the requests as sent and the answers as received, faults included.
  const policies: ProxyPolicy[] = [...(meter ? [meter] : []), ...(faults ? [faults] : [])];
  if (policies.length === 0) return {};
  const proxy = await startDynamoDbProxy({ target: dynamodbEndpoint, policies });
  teardown.add(() => proxy.stop());
  return {
    ...(faults ? { faults } : {}),
    ...(meter ? { meter } : {}),
    consumerEndpoint: proxy.endpoint,
  };
}

type SpecOf = (
  name: string,
  timeoutSeconds: number,
  memoryMb: number,
  environment: Record<string, string>,
) => FunctionSpec;

/** Step 5: how a function is described to the local Lambda service: its bundle, environment and log file. */
function functionSpecs(input: {
  readonly bundles: Bundles;
  readonly emulators: Endpoints;
  readonly dataPath: DataPath;
  readonly logDir: string | undefined;
  readonly teardown: Teardown;
}): SpecOf {
  const sdkEnvironment = {
    AWS_REGION: REGION,
    AWS_DEFAULT_REGION: REGION,
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
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

interface Consumers {
  readonly functions: ReadonlyMap<Mode, LocalFunction>;
  readonly mappings: ReadonlyMap<Mode, LocalEventSourceMapping>;
  /** A fatal problem seen by a mapping (a handler that cannot initialise), if any. */
  readonly fatalError: () => Error | undefined;
  /** Every mapping starts polling. */
  readonly start: () => void;
}

/** Step 6: per selected mode, its function and the event source mapping that feeds it; start() polls. */
function createConsumers(
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
      region: REGION,
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

/** What the local runtime saw of a mode, live: the mapping's, the function's and the fault policy's counts. */
function liveStatsOf(consumers: Consumers, dataPath: DataPath, mode: Mode): LiveModeStats {
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
  };
}

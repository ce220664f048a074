// The embedded environment: what it offers a run, and its start, step by step, from the pieces beside it.
import type { SQSClient } from '@aws-sdk/client-sqs';
import { chargeOf, MODE_NAMES, type Mode } from '../../contract/topology.js';
import type { VerifierResult } from '../../verifier/verifier.js';
import type { DynamoDbMeterStats } from '../local-aws/dynamodb-proxy/meter.js';
import { reserveLoopbackPort } from '../local-aws/emulators/dynamodb-emulator.js';
import type { FunctionStats } from '../local-aws/lambda-runtime/local-function.js';
import { LOCAL_REGION } from '../local-aws/local-identity.js';
import { allOrFirstError } from './all-or-first-error.js';
import {
  connectClients,
  startDataPathProxies,
  startEmulatorsAndBundles,
  startProvider,
} from './embedded-emulators.js';
import {
  createConsumers,
  createVerifier,
  functionSpecs,
  liveStatsOf,
  prewarmFunctions,
} from './embedded-functions.js';
import { type EmbeddedOptions, embeddedModeSettings } from './embedded-options.js';
import type { EffectiveModeSettings, ExperimentEnvironment, VerifierInvocation } from './environment.js';
import { createModeQueues, createStackTables, type ProvisionedQueues, stackTableNames } from './provision.js';
import { readQueueDepth } from './queue-depth.js';
import { redriveByCopy } from './redrive.js';
import { Teardown } from './teardown.js';

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
    const verifier = createVerifier({ specOf, tables, deadLetterQueueUrls, teardown });

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
      // The local runtime counts every record from its receive to the end of its batch, and fauxqs's
      // counts are exact, so a queue seen empty twice 100 ms apart is drained: no longer quiet
      // period is needed (each extra poll was time every run waited).
      drainPolicy: { pollMs: 100, stablePolls: 2 },
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
        region: LOCAL_REGION,
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

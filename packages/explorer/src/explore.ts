import { type CellEnvironment, type CellRun, runCell } from './cell.js';
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
  /** A delivery ran into the function timeout. */
  readonly timedOut: boolean;
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
  readonly seconds: number;
  /** Why the clean run proves nothing, when it does not (no request went through the given clients). */
  readonly warnings: readonly string[];
}

/** A step of the clean trace, with the delivery it was taken in. */
export interface TracedStep extends Step {
  readonly delivery: number;
}

/**
 * The handler sent no request through the clients the explorer gave its factory, and failed on an
 * AWS SDK client of its own: it builds its clients itself (at module scope), so nothing it does
 * can be traced or faulted.
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
  const clean = cellOf([], 'single', cleanRun);
  const steps = cleanRun.deliveries.flatMap((delivery) =>
    delivery.trace.map((step) => ({ ...step, delivery: delivery.delivery })),
  );
  const warnings = ownClientsCheck(scenario, cleanRun);
  const cells: ExploredCell[] = [];
  let total = 0;
  const runAll = async (plans: readonly (readonly PlannedFault[])[], kind: CellKind) => {
    total += plans.length;
    const ran: ExploredCell[] = [];
    await forEachConcurrently(plans, concurrency, async (plan) => {
      const cell = cellOf(plan, kind, await runCell(env, scenario, plan));
      ran.push(cell);
      cells.push(cell);
      options.onCell?.(cells.length, total);
    });
    return ran;
  };
  if (options.only !== undefined) {
    const plans = options.only.map((text) => parsePlan(text));
    const ran = await runAll(plans, 'single');
    for (const cell of ran) assertPlanned(cell);
    return finish();
  }
  const singles = await runAll(
    steps.flatMap((step) =>
      faultsAt(step).map((fault) => [{ delivery: step.delivery, step: step.key, fault }]),
    ),
    'single',
  );
  await runAll(singles.flatMap(retryPlans), 'retry');
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
    await runAll(pairs, 'pair');
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
      seconds: (performance.now() - started) / 1000,
      warnings,
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

function cellOf(plan: readonly PlannedFault[], kind: CellKind, run: CellRun): ExploredCell {
  const held = run.violations.length === 0;
  const tone = run.timedOut ? 'timed-out' : !held ? 'broken' : (run.tone ?? 'exact');
  const summary =
    run.summary ?? (held ? (tone === 'timed-out' ? 'timed out' : tone) : (run.violations[0] ?? ''));
  return {
    plan: planText(plan),
    faults: plan,
    kind,
    violations: run.violations,
    summary,
    tone,
    held,
    timedOut: run.timedOut,
    deliveries: run.deliveries,
    cellId: run.cell.id,
    ...(run.detail !== undefined ? { detail: run.detail } : {}),
  };
}

/**
 * A clean run in which no request went through the factory's clients and an invocation failed on
 * an AWS SDK client's error: the handler's own clients. Refused, naming the fix. A clean run
 * with no request and no such error (a handler that throws its own error) is explored: its cells
 * show the failure.
 */
function ownClientsCheck(scenario: Scenario, clean: CellRun): string[] {
  const requests = clean.deliveries
    .flatMap((delivery) => delivery.trace)
    .filter((step) => step.service !== 'mapping');
  if (requests.length > 0) return [];
  const sdkFailure = clean.deliveries.find(
    (delivery) => delivery.error !== undefined && isSdkError(delivery.error),
  );
  if (sdkFailure !== undefined) {
    throw new OwnClientsError(
      `${scenario.name}: the handler sent no request through the clients the explorer handed its factory, and failed with ${sdkFailure.error}. ` +
        'It builds its own clients (say new DynamoDBClient({}) at module scope), whose requests the explorer can neither trace nor fault. ' +
        'Give the explorer a factory over the clients it hands you, e.g. handler: ({ ddb, tables }) => createReserveHandler(ddb, tables.stock), ' +
        'and keep the module-scope client in your Lambda entry only.',
    );
  }
  return scenario.tables !== undefined && Object.keys(scenario.tables).length > 0
    ? [`${scenario.name}: the clean run sent no request through the explorer's clients: no step to fault`]
    : [];
}

function isSdkError(error: string): boolean {
  return /CredentialsProviderError|UnrecognizedClientException|InvalidSignatureException|UnknownEndpoint|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ExpiredToken/.test(
    error,
  );
}

/** A replayed cell's every fault landed: its step is in that delivery's trace, and takes that fault. */
function assertPlanned(cell: ExploredCell): void {
  for (const fault of cell.faults) {
    const trace = cell.deliveries.find((delivery) => delivery.delivery === fault.delivery)?.trace ?? [];
    const step = trace.find((each) => each.key === fault.step);
    if (step === undefined || !faultsAt(step).includes(fault.fault)) {
      throw new PlanError(
        `${fault.fault}@${fault.delivery}:${fault.step}: ${
          step === undefined
            ? 'no such step in delivery'
            : `that step does not take ${fault.fault} in delivery`
        } ${fault.delivery}, whose steps are: ${trace.map((each) => each.key).join(', ') || 'none (no such delivery)'}`,
      );
    }
  }
}

/** Runs `task` over `items`, at most `limit` at once. */
async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await task(item);
    }
  });
  await Promise.all(workers);
}

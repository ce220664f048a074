import { chargeOf, type Mode } from '../../contract/topology.js';
import type { ModeOutcome } from '../../functions/shared/outcome.js';
import { forEachConcurrently } from '../experiment/concurrently.js';
import { violations } from '../report/terminal.js';
import { type CellRun, type ExploreEnvironment, runCell, type Scenario } from './cell.js';
import { type Fault, faultsAt, type PlannedFault, planText, type Step } from './steps.js';

/** What a cell shows, by event id: the verifier's counts that the matrix prints. */
export interface CellCounts {
  readonly appliedOnce: number;
  readonly duplicated: number;
  readonly lost: number;
  readonly deadLettered: number;
  readonly driftCents: number;
  /** The ledger's records and its balances agree (the verifier's `consistent`). */
  readonly consistent: boolean;
  /** Charge modes: events the provider charged twice or more. */
  readonly chargedTwice?: number;
}

export interface ExploredCell {
  /** The faults, in order: one at depth 1, the second in the redelivery at depth 2. */
  readonly plan: readonly PlannedFault[];
  readonly counts: CellCounts;
  /** The verifier's whole outcome of the cell's run. */
  readonly outcome: ModeOutcome;
  /** Every event applied once, nothing lost, dead-lettered or charged twice, the money exact. */
  readonly exact: boolean;
  /** What the mode promises (contract/topology.ts) held in this cell. */
  readonly promiseHeld: boolean;
  /** A delivery ran into the function timeout: the machine was too slow for the cell as planned. */
  readonly timedOut: boolean;
  /** Each delivery's trace, as the cell ran. */
  readonly deliveries: CellRun['deliveries'];
  readonly runId: string;
  /** The command that runs this cell alone (the explorer's report adds it). */
  readonly replay?: string;
}

export interface ModeExploration {
  readonly mode: Mode;
  /** The clean run's trace: the matrix's rows. */
  readonly steps: readonly Step[];
  /** The clean run's counts: with no fault, every mode is exact. */
  readonly clean: CellCounts;
  readonly cells: readonly ExploredCell[];
  readonly seconds: number;
}

export interface ExploreOptions {
  readonly scenario: Scenario;
  readonly depth: 1 | 2;
  /** Cells in flight at once. */
  readonly concurrency: number;
  /** Only these cells (a replay); otherwise every cell of the depth. */
  readonly only?: readonly (readonly PlannedFault[])[];
  readonly onCell?: (mode: Mode, done: number, total: number) => void;
}

export function countsOf(mode: Mode, outcome: ModeOutcome): CellCounts {
  return {
    appliedOnce: outcome.appliedOnce,
    duplicated: outcome.duplicated,
    lost: outcome.lost,
    deadLettered: outcome.deadLettered,
    driftCents: outcome.driftCents,
    consistent: outcome.consistent,
    ...(chargeOf(mode) !== undefined ? { chargedTwice: outcome.doubleCharged ?? 0 } : {}),
  };
}

export function isExact(counts: CellCounts, events: number): boolean {
  return (
    counts.appliedOnce === events &&
    counts.duplicated === 0 &&
    counts.lost === 0 &&
    counts.deadLettered === 0 &&
    counts.driftCents === 0 &&
    counts.consistent &&
    (counts.chargedTwice ?? 0) === 0
  );
}

/**
 * The mode's promise in one cell: the counts the run's table marks with `!` (report/terminal.ts:
 * what contract/topology.ts says it never does, lose or duplicate, and what no correct run shows,
 * unexpected applications, payloads unlike the manifest, a ledger that does not add up), and a
 * charge with an idempotency key never taken twice.
 */
export function promiseHeld(mode: Mode, outcome: ModeOutcome): boolean {
  const charge = chargeOf(mode);
  return (
    violations(mode, outcome).size === 0 && (!charge?.idempotencyKey || (outcome.doubleCharged ?? 0) === 0)
  );
}

/** Every (step, fault) of a delivery's trace, each cell counted once. */
function faultsOf(steps: readonly Step[], delivery: number): PlannedFault[] {
  return steps.flatMap((step) => faultsAt(step).map((fault: Fault) => ({ delivery, step: step.key, fault })));
}

/**
 * Explores one mode: a clean run records the trace, then one cell per (step, fault) of it, and at
 * depth 2 one per pair, the second fault at a step of the redelivery's own trace.
 */
export async function exploreMode(
  env: ExploreEnvironment,
  mode: Mode,
  options: ExploreOptions,
): Promise<ModeExploration> {
  const started = performance.now();
  const { scenario } = options;
  const clean = await runCell(env, mode, scenario, []);
  const steps = clean.deliveries[0]?.trace ?? [];
  const cells: ExploredCell[] = [];
  const run = async (plan: readonly PlannedFault[]): Promise<ExploredCell> => {
    const result = await runCell(env, mode, scenario, plan);
    const counts = countsOf(mode, result.outcome);
    const cell: ExploredCell = {
      plan,
      counts,
      outcome: result.outcome,
      exact: isExact(counts, scenario.events),
      promiseHeld: promiseHeld(mode, result.outcome),
      timedOut: result.timedOut,
      deliveries: result.deliveries,
      runId: result.runId,
    };
    cells.push(cell);
    options.onCell?.(mode, cells.length, total);
    return cell;
  };
  const first = options.only ?? faultsOf(steps, 1).map((fault) => [fault]);
  let total = first.length;
  const firstCells: ExploredCell[] = [];
  await forEachConcurrently(first, options.concurrency, async (plan) => {
    firstCells.push(await run(plan));
  });
  if (options.depth === 2 && options.only === undefined) {
    // The redelivery's own trace: what the consumer does after the first fault.
    const pairs = firstCells.flatMap((cell) => {
      const redelivery = cell.deliveries[1]?.trace ?? [];
      return faultsOf(redelivery, 2).map((second) => [...cell.plan, second]);
    });
    total += pairs.length;
    await forEachConcurrently(pairs, options.concurrency, async (plan) => {
      await run(plan);
    });
  }
  if (options.only !== undefined) for (const cell of cells) assertPlanned(cell);
  return {
    mode,
    steps,
    clean: countsOf(mode, clean.outcome),
    cells: sortCells(cells),
    seconds: (performance.now() - started) / 1000,
  };
}

/** A replayed cell's every fault landed: its step is in that delivery's trace, and takes that fault. */
function assertPlanned(cell: ExploredCell): void {
  for (const fault of cell.plan) {
    const trace = cell.deliveries[fault.delivery - 1]?.trace ?? [];
    const step = trace.find((each) => each.key === fault.step);
    if (step === undefined || !faultsAt(step).includes(fault.fault)) {
      throw new PlanError(
        `--cell ${fault.fault}@${fault.delivery}:${fault.step}: ${
          step === undefined
            ? 'no such step in delivery'
            : `that step does not take ${fault.fault} in delivery`
        } ${fault.delivery}, whose steps are: ${trace.map((each) => each.key).join(', ') || 'none (no such delivery)'}`,
      );
    }
  }
}

/** A `--cell` that names a step the consumer never takes, or a fault the step cannot take. */
export class PlanError extends Error {
  override readonly name = 'PlanError';
}

/** In plan order, so that the report reads the same on every run. */
function sortCells(cells: ExploredCell[]): ExploredCell[] {
  const key = (cell: ExploredCell) => planText(cell.plan);
  return [...cells].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

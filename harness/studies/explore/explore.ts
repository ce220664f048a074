import {
  type CellEnvironment,
  type Exploration,
  type ExploredCell,
  exploreScenario,
  type InterleavingOptions,
  type PlannedFault,
  planText,
  runCell,
} from '@sqs-delivery-semantics/explorer';
import type { Mode } from '../../../contract/topology.js';
import type { ModeOutcome } from '../../../verifier/outcome.js';
import { type LabDetail, type LabScenario, type LabTables, labScenario } from './lab-scenario.js';
import type { CellCounts } from './verdict.js';

/** What the lab's cells share: the explorer's environment and the lab's tables and provider. */
export type ExploreEnvironment = CellEnvironment & LabTables;

/** A lab cell: the explorer's, with the verifier's outcome and counts its invariant kept. */
export interface LabCell extends ExploredCell {
  readonly counts: CellCounts;
  readonly outcome: ModeOutcome;
  /** Every event applied once, nothing lost, dead-lettered or charged twice, the money exact. */
  readonly exact: boolean;
  /** What the mode promises (contract/topology.ts) held in this cell. */
  readonly promiseHeld: boolean;
  /** The command that runs this cell alone (the explorer's report adds it). */
  readonly replay?: string;
}

export interface ModeExploration extends Exploration {
  readonly mode: Mode;
  readonly clean: LabCell;
  readonly cells: readonly LabCell[];
}

export interface ExploreModeOptions {
  readonly scenario: LabScenario;
  readonly depth: 1 | 2;
  /** Cells in flight at once. */
  readonly concurrency: number;
  /** Only these cells (a replay); otherwise every cell of the depth. */
  readonly only?: readonly (readonly PlannedFault[])[];
  readonly onCell?: (mode: Mode, done: number, total: number) => void;
  /** Two invocations in flight at once instead of the fault cells: every schedule, or these (a replay). */
  readonly interleavings?: InterleavingOptions;
  readonly onSchedule?: (mode: Mode, done: number) => void;
}

/**
 * Explores one lab mode through the explorer's API, as a team explores its own consumer: the
 * mode's handler, its scenario, its promise as the invariant (the verifier's join).
 */
export async function exploreMode(
  env: ExploreEnvironment,
  mode: Mode,
  options: ExploreModeOptions,
): Promise<ModeExploration> {
  const exploration = await exploreScenario(env, labScenario(env, mode, options.scenario), {
    depth: options.depth,
    concurrency: options.concurrency,
    ...(options.only ? { only: options.only.map((plan) => planText(plan)) } : {}),
    ...(options.onCell
      ? { onCell: (done: number, total: number) => options.onCell?.(mode, done, total) }
      : {}),
    ...(options.interleavings !== undefined
      ? {
          cells: false,
          interleavings: options.interleavings,
          onSchedule: (done: number) => options.onSchedule?.(mode, done),
        }
      : {}),
  });
  return { ...exploration, mode, clean: labCell(exploration.clean), cells: exploration.cells.map(labCell) };
}

function labCell(cell: ExploredCell): LabCell {
  const detail = cell.detail as LabDetail | undefined;
  if (detail === undefined) {
    // The lab's invariant always keeps its detail, unless the verifier itself failed.
    throw new Error(
      `cell ${cell.plan || 'clean'}: the verifier gave no outcome (${cell.violations.join('; ')})`,
    );
  }
  return {
    ...cell,
    counts: detail.counts,
    outcome: detail.outcome,
    exact: detail.exact,
    promiseHeld: cell.held,
  };
}

/** One lab cell, run alone: its deliveries and the verifier's outcome. */
export async function runLabCell(
  env: ExploreEnvironment,
  mode: Mode,
  scenario: LabScenario,
  plan: readonly PlannedFault[],
) {
  const run = await runCell(env, labScenario(env, mode, scenario), plan);
  const detail = run.detail as LabDetail | undefined;
  if (detail === undefined) throw new Error(`the verifier gave no outcome: ${run.violations.join('; ')}`);
  return { ...run, outcome: detail.outcome };
}

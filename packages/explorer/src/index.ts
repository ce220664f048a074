/**
 * Explore your own SQS consumer: every step it takes (each attempt of each request, the
 * acknowledgement) faulted in turn, on real emulators, and your invariant checked in every cell.
 */

export { type CellRun, DEFAULT_FUNCTION_TIMEOUT_MS, runCell } from './cell.js';
export { type CellEnvironment, lambdaContext } from './execution-environment.js';
export {
  type Exploration,
  type ExploredCell,
  type ExploreOptions,
  exploreScenario,
  OwnClientsError,
  type TracedStep,
} from './explore.js';
export {
  assertHeld,
  type Explorer,
  type ExplorerOptions,
  InvariantBroken,
  ScenarioError,
  startExplorer,
  writeReport,
} from './explorer.js';
export { powertoolsHash } from './identifiers.js';
export {
  INTERLEAVING_KINDS,
  INTERLEAVINGS,
  type InterleavingExploration,
  type InterleavingKind,
  type InterleavingOptions,
  parseSchedule,
  ScheduleError,
  type ScheduleRun,
} from './interleave.js';
export {
  apiScheduleReplay,
  CHOICES_LEGEND,
  firstFailing,
  formatInterleavings,
  interleavingLine,
  type ScheduleReplay,
  scheduleColumns,
} from './interleave-report.js';
export {
  type Applications,
  allOf,
  appliedAtMostOnce,
  appliedFromList,
  appliedFromStream,
  eachAppliedOnce,
  neverBelow,
  noneLost,
  sumEquals,
  violationsOf,
} from './invariants.js';
export {
  currentInvocation,
  Invocation,
  interceptClient,
  interceptFetch,
  type Refusal,
} from './invocation.js';
export {
  apiReplay,
  cellText,
  deliveryLine,
  formatExploration,
  plural,
  type ReplayText,
  renderExplorePage,
} from './report.js';
export type {
  CellContext,
  Change,
  DeadLetter,
  DeliveryRecord,
  FinalState,
  HandlerClients,
  HandlerFactory,
  Invariant,
  QueueSettings,
  Scenario,
  ScenarioEvent,
  SqsHandler,
  TableDefinition,
  Verdict,
} from './scenario.js';
export { defineScenario } from './scenario.js';
export type { Actor, TimelineEntry } from './scheduler.js';
export { FIFO_PATCH, fifoPatchProblem, type RunningSqs, startSqsEmulator } from './sqs-emulator.js';
export {
  ACKNOWLEDGE,
  type CellKind,
  FAULT_NAMES,
  FAULT_TITLES,
  FAULTS,
  type Fault,
  faultsAt,
  PlanError,
  type PlannedFault,
  parsePlan,
  planText,
  RETRY_FAULTS,
  RETRY_TITLES,
  type Service,
  type Step,
  stepKey,
  stepLabel,
} from './steps.js';

import type { CellEnvironment } from './execution-environment.js';
import { useLogicalTime } from './invocation.js';
import type { Scenario } from './scenario.js';
import {
  type InterleavingKind,
  type RunWithDecisions,
  runSchedule,
  type ScheduleRun,
} from './schedule-run.js';

export type { InterleavingKind, ScheduleRun } from './schedule-run.js';

/**
 * The bounded scenarios of two invocations in flight at once. Each runs on resources of its own,
 * as a cell does; after both invocations end, what they left on the queue is drained as the
 * mapping drains it (one invocation at a time), and the invariant reads the final state.
 */
export const INTERLEAVINGS: Readonly<Record<InterleavingKind, string>> = {
  'two-deliveries':
    "one event, two deliveries in flight: the second received at each step of the first (a visibility timeout that expired, a standard queue's second copy), every order of their steps after",
  'hot-key': 'two events on one item, one invocation each, every order of their steps',
  'in-doubt':
    "two-deliveries with the first delivery's first transaction in doubt: applied, its answer lost, retried with its ClientRequestToken",
};

export const INTERLEAVING_KINDS = Object.keys(INTERLEAVINGS) as InterleavingKind[];

export interface InterleavingOptions {
  /** Which scenarios (default: all three). */
  readonly kinds?: readonly InterleavingKind[];
  /** Only these schedules, by name (`two-deliveries:A,B,B!A`): a replay. */
  readonly schedules?: readonly string[];
  /** Stops enumerating a scenario at this many schedules, said so (default 2000). */
  readonly maxSchedules?: number;
  /** With A's deadline as an option (default: in two-deliveries, where Powertools' INPROGRESS expiry is). */
  readonly deadlines?: boolean;
}

export interface InterleavingExploration {
  readonly kind: InterleavingKind;
  readonly description: string;
  /** Why the scenario does not apply (a FIFO group lock, no transaction, one event). */
  readonly skipped?: string;
  readonly schedules: readonly ScheduleRun[];
  /** Every schedule ran (not stopped at `maxSchedules`). */
  readonly exhaustive: boolean;
  /** Only the schedules named (`interleavings: { schedules }`): a replay, not an enumeration. */
  readonly replayed?: true;
  readonly seconds: number;
}

/** A schedule named by hand that cannot run: an unknown scenario, a choice that is no option. */
export class ScheduleError extends Error {
  override readonly name = 'ScheduleError';
}

/**
 * Enumerates every schedule of each scenario, depth first: a run takes the first option at each
 * choice after the schedule it was given; each other option at each of those choices is a new
 * schedule to run. Runs are independent cells, `concurrency` at once.
 */
export async function exploreInterleavings(
  env: CellEnvironment,
  scenario: Scenario,
  options: InterleavingOptions & { readonly concurrency?: number; readonly onSchedule?: () => void },
): Promise<InterleavingExploration[]> {
  const restore = useLogicalTime();
  try {
    if (options.schedules !== undefined)
      return await replay(env, scenario, options.schedules, options.deadlines);
    const results: InterleavingExploration[] = [];
    for (const kind of options.kinds ?? INTERLEAVING_KINDS) {
      results.push(await enumerate(env, scenario, kind, options));
    }
    return results;
  } finally {
    restore();
  }
}

async function replay(
  env: CellEnvironment,
  scenario: Scenario,
  names: readonly string[],
  deadlines: boolean | undefined,
) {
  const byKind = new Map<InterleavingKind, ScheduleRun[]>();
  for (const name of names) {
    const { kind, choices } = parseSchedule(name);
    const problem = await applicability(env, scenario, kind);
    if (problem !== undefined) throw new ScheduleError(`${name}: ${kind} does not apply here: ${problem}`);
    // A name says its choices, not whether A's deadline was an option (it adds choices where only A
    // waits): the setting given, else the default, then the other; the run whose choices are the name's.
    const first = deadlines ?? kind === 'two-deliveries';
    const fits = (run: RunWithDecisions) =>
      run.summary !== 'not landed' &&
      choices.every((choice, index) => run.decisions[index]?.chosen === choice);
    const inDoubt = kind === 'in-doubt' ? await firstTransaction(env, scenario) : undefined;
    let result = await runSchedule(env, scenario, kind, choices, first, inDoubt);
    if (!fits(result) && deadlines === undefined) {
      const other = await runSchedule(env, scenario, kind, choices, !first, inDoubt);
      if (fits(other)) result = other;
    }
    if (!fits(result) && result.summary !== 'not landed') {
      throw new ScheduleError(`${name}: the run took the choices ${result.schedule}, not the name's`);
    }
    const { decisions: _, skipped, ...run } = result;
    if (skipped !== undefined) throw new ScheduleError(`${name}: ${kind} does not apply here: ${skipped}`);
    if (run.violations.some((violation) => violation.startsWith('not the schedule named'))) {
      throw new ScheduleError(`${name}: ${run.violations.join('; ')}`);
    }
    byKind.set(kind, [...(byKind.get(kind) ?? []), run]);
  }
  return [...byKind.entries()].map(([kind, schedules]) => ({
    kind,
    description: INTERLEAVINGS[kind],
    schedules,
    exhaustive: false,
    replayed: true as const,
    seconds: 0,
  }));
}

/** `two-deliveries:A,B,B!A` as its scenario and choices. */
export function parseSchedule(name: string): { kind: InterleavingKind; choices: string[] } {
  const colon = name.indexOf(':');
  const kind = (colon < 0 ? name : name.slice(0, colon)) as InterleavingKind;
  if (!INTERLEAVING_KINDS.includes(kind)) {
    throw new ScheduleError(
      `${name}: "${kind}" is not an interleaving scenario (${INTERLEAVING_KINDS.join(', ')})`,
    );
  }
  const choices = colon < 0 || colon === name.length - 1 ? [] : name.slice(colon + 1).split(',');
  const bad = choices.find(
    (choice) => !/^([AB](=(deleted|kept|in-progress))?|[AB]![AB]|A-timeout)$/.test(choice),
  );
  if (bad !== undefined) {
    throw new ScheduleError(
      `${name}: "${bad}" is not a choice (A, B, A=deleted, A=kept, A=in-progress, B!A, A-timeout)`,
    );
  }
  return { kind, choices };
}

async function enumerate(
  env: CellEnvironment,
  scenario: Scenario,
  kind: InterleavingKind,
  options: InterleavingOptions & { readonly concurrency?: number; readonly onSchedule?: () => void },
): Promise<InterleavingExploration> {
  const started = performance.now();
  const base = { kind, description: INTERLEAVINGS[kind] };
  const skipped = await applicability(env, scenario, kind);
  if (skipped !== undefined) return { ...base, skipped, schedules: [], exhaustive: true, seconds: 0 };
  const limit = options.maxSchedules ?? 2000;
  const deadlines = options.deadlines ?? kind === 'two-deliveries';
  const schedules: RunWithDecisions[] = [];
  const pending: string[][] = [];
  const expand = (run: RunWithDecisions, prefix: readonly string[]) => {
    // Each other option at each choice this run made beyond its prefix: a schedule of its own.
    const decisions = run.decisions;
    for (let index = decisions.length - 1; index >= prefix.length; index -= 1) {
      const decision = decisions[index] as { options: readonly string[]; chosen: string };
      const before = decisions.slice(0, index).map((each) => each.chosen);
      for (const option of [...decision.options].reverse()) {
        if (option !== decision.chosen) pending.push([...before, option]);
      }
    }
  };
  const inDoubt = kind === 'in-doubt' ? await firstTransaction(env, scenario) : undefined;
  const firstRun = await runSchedule(env, scenario, kind, [], deadlines, inDoubt);
  if (firstRun.skipped !== undefined) {
    return { ...base, skipped: firstRun.skipped, schedules: [], exhaustive: true, seconds: 0 };
  }
  schedules.push(firstRun);
  options.onSchedule?.();
  expand(firstRun, []);
  let inFlight = 0;
  let failure: { error: unknown } | undefined;
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (
        failure === undefined &&
        pending.length > 0 &&
        inFlight < Math.max(1, options.concurrency ?? 4) &&
        schedules.length + inFlight < limit
      ) {
        const prefix = pending.pop() as string[];
        inFlight += 1;
        runLanded(env, scenario, kind, prefix, deadlines, inDoubt)
          .then((run) => {
            schedules.push(run);
            options.onSchedule?.();
            expand(run, prefix);
          })
          .catch((error: unknown) => {
            failure ??= { error };
          })
          .finally(() => {
            inFlight -= 1;
            if (
              inFlight === 0 &&
              (failure !== undefined || pending.length === 0 || schedules.length >= limit)
            )
              resolve();
            else pump();
          });
      }
    };
    pump();
    if (inFlight === 0) resolve();
  });
  if (failure !== undefined) throw failure.error;
  schedules.sort((a, b) => (a.schedule < b.schedule ? -1 : a.schedule > b.schedule ? 1 : 0));
  return {
    ...base,
    schedules: schedules.map(({ decisions: _, skipped: __, ...run }) => run),
    exhaustive: pending.length === 0,
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * A schedule, run again once when it did not land: a step the run it was planned from did not take
 * (a client's timeout on a loaded machine makes a retry appear). A second miss is reported as such.
 */
async function runLanded(
  env: CellEnvironment,
  scenario: Scenario,
  kind: InterleavingKind,
  prefix: readonly string[],
  deadlines: boolean,
  inDoubt: string | undefined,
): Promise<RunWithDecisions> {
  const run = await runSchedule(env, scenario, kind, prefix, deadlines, inDoubt);
  return run.summary === 'not landed' ? runSchedule(env, scenario, kind, prefix, deadlines, inDoubt) : run;
}

/** Why a scenario does not apply to this consumer (hot-key: see hotKeyProblem, found by its first run), or undefined. */
async function applicability(
  env: CellEnvironment,
  scenario: Scenario,
  kind: InterleavingKind,
): Promise<string | undefined> {
  if (kind === 'in-doubt' && (await firstTransaction(env, scenario)) === undefined) {
    return 'the first delivery sends no TransactWriteItems';
  }
  return undefined;
}

const firstTransactions = new WeakMap<Scenario, Promise<string | undefined>>();

/** The first TransactWriteItems the first delivery sends, from the default two-deliveries run. */
function firstTransaction(env: CellEnvironment, scenario: Scenario): Promise<string | undefined> {
  let found = firstTransactions.get(scenario);
  if (found === undefined) {
    found = runSchedule(env, scenario, 'two-deliveries', [], false).then(
      (run) =>
        run.deliveries[0]?.trace.find((step) => step.operation === 'TransactWriteItems' && step.attempt === 1)
          ?.key,
    );
    firstTransactions.set(scenario, found);
    // A run that failed is not remembered: the next asks again.
    found.catch(() => firstTransactions.delete(scenario));
  }
  return found;
}

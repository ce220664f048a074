import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { type CellRun, CellSession } from './cell.js';
import type { CellEnvironment, ExecutionEnvironment } from './execution-environment.js';
import { describe, executionEnvironment } from './execution-environment.js';
import { Invocation, useLogicalTime } from './invocation.js';
import type { Scenario } from './scenario.js';
import { type Actor, type HeldStep, type Release, Scheduler, type TimelineEntry } from './scheduler.js';
import { type Fault, type Step, stepLabel } from './steps.js';

/**
 * The bounded scenarios of two invocations in flight at once. Each runs on resources of its own,
 * as a cell does; after both invocations end, what they left on the queue is drained as the
 * mapping drains it (one invocation at a time), and the invariant reads the final state.
 */
export const INTERLEAVINGS = {
  'two-deliveries':
    "one event, two deliveries in flight: the second received at each step of the first (a visibility timeout that expired, a standard queue's second copy), every order of their steps after",
  'hot-key': 'two events on one item, one invocation each, every order of their steps',
  'in-doubt':
    "two-deliveries with the first delivery's first transaction in doubt: applied, its answer lost, retried with its ClientRequestToken",
} as const;

export type InterleavingKind = keyof typeof INTERLEAVINGS;

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

/** One schedule run: its choices, what happened in order, and the invariant's verdict. */
export interface ScheduleRun extends Omit<CellRun, 'cell' | 'tone'> {
  /** `kind:choice,choice,…`: its name and its replay. */
  readonly schedule: string;
  readonly timeline: readonly TimelineEntry[];
  /** A choice the scheduler made that was not a plain release (a refusal, a stale delete's outcome, a deadline). */
  readonly injected: boolean;
  readonly held: boolean;
  readonly tone: 'exact' | 'held' | 'broken' | 'timed-out';
  readonly summary: string;
  readonly cellId: string;
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
    let result = await runSchedule(env, scenario, kind, choices, first);
    if (!fits(result) && deadlines === undefined) {
      const other = await runSchedule(env, scenario, kind, choices, !first);
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
  const firstRun = await runSchedule(env, scenario, kind, [], deadlines);
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
        runLanded(env, scenario, kind, prefix, deadlines)
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
): Promise<RunWithDecisions> {
  const run = await runSchedule(env, scenario, kind, prefix, deadlines);
  return run.summary === 'not landed' ? runSchedule(env, scenario, kind, prefix, deadlines) : run;
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

interface RunWithDecisions extends ScheduleRun {
  readonly decisions: readonly { readonly options: readonly string[]; readonly chosen: string }[];
  /** The scenario does not apply, and why. */
  readonly skipped?: string;
}

const EMPTY_RUN = {
  timeline: [],
  injected: false,
  decisions: [],
  deliveries: [],
  timedOut: false,
  violations: [],
  held: true,
  tone: 'exact',
  summary: 'skipped',
  cellId: '',
} as const;

/** Why two events cannot be in two invocations at once here: one event, or one FIFO message group. */
function hotKeyProblem(session: CellSession): string | undefined {
  const [first, second] = session.events;
  if (first === undefined || second === undefined) return 'the scenario has one event';
  if (session.settings.fifo && (first.groupId ?? first.id) === (second.groupId ?? second.id)) {
    return "its first two events are in one message group: FIFO's group lock hands the second out only after the first is deleted or its visibility timeout ends, so they are never in flight at once";
  }
  return undefined;
}

/**
 * Runs one schedule: A delivers the first event; B delivers it again (received at the step the
 * schedule says) or delivers the second event; each step of either waits for the scheduler.
 */
export async function runSchedule(
  env: CellEnvironment,
  scenario: Scenario,
  kind: InterleavingKind,
  choices: readonly string[],
  deadlines = kind === 'two-deliveries',
): Promise<RunWithDecisions> {
  const inDoubt = kind === 'in-doubt' ? await firstTransaction(env, scenario) : undefined;
  const session = await CellSession.open(env, scenario, (events) =>
    events.slice(0, kind === 'hot-key' ? 2 : 1),
  );
  const skipped = kind === 'hot-key' ? hotKeyProblem(session) : undefined;
  if (skipped !== undefined) {
    session.environment.destroy();
    await session.close();
    return { ...EMPTY_RUN, schedule: `${kind}:`, skipped };
  }
  const invocations = new Map<Actor, Invocation>();
  const deadlineOf = new Map<Actor, number>();
  /** The message of two-deliveries: its newest receipt handle, and whether it was deleted. */
  const message = { newest: '', deleted: false };
  /** The receipt handle each invocation received. */
  const handles = new Map<Actor, string>();
  const scheduler = new Scheduler(choices, {
    // Stale when another receive came since; AWS: a standard queue may or may not delete, a FIFO
    // queue refuses the expired handle (the message stays).
    staleOutcomes: (actor) => {
      const mine = handles.get(actor);
      if (kind === 'hot-key' || message.deleted || mine === undefined || mine === message.newest) return [];
      return session.settings.fifo ? ['kept'] : ['deleted', 'kept'];
    },
    timeOut: (actor) => invocations.get(actor)?.timeOut(),
    deadlineOf: (actor) => deadlineOf.get(actor),
    // Real time, generous: the SDK's backoff after a throttling answer (TransactionInProgress) is up to seconds.
    watchdogMs: Math.max(session.timeoutMs, 10_000),
    deadlines,
  });
  const time = {
    now: scheduler.clock,
    clock: scheduler.clock,
    waitUntil: async (at: number) => scheduler.advanceTo(at),
  };
  const environments: (ExecutionEnvironment | Promise<ExecutionEnvironment>)[] = [session.environment];
  try {
    const records = await session.receive();
    const first = records[0];
    if (first === undefined) throw new Error(`${scenario.name}: no message to deliver (the queue is empty)`);
    message.newest = first.receiptHandle;
    const keys = new TableKeys(env);
    /** Hot key: the records neither invocation deleted. */
    const undeleted: SQSRecord[] = [];
    const actor = async (who: Actor, delivery: number) => {
      scheduler.start(who);
      let batch: SQSRecord[];
      if (who === 'A') batch = [first];
      else if (kind === 'hot-key') batch = [records[1] as SQSRecord];
      else {
        await scheduler.hold(heldAt(who, 'start', 'receive (its second delivery)'));
        const received = await receiveAgain(session, message, first);
        if (received === undefined) {
          scheduler.timeline.push({
            actor: who,
            label: 'receive',
            note: 'nothing: FIFO deleted it once, no second copy',
          });
          scheduler.finish(who);
          return;
        }
        batch = [received];
      }
      const made = who === 'A' ? session.environment : executionEnvironment(env, scenario, session.cell);
      // Kept before it is awaited: the finally destroys it whatever happens next.
      if (who === 'B') environments.push(made as Promise<ExecutionEnvironment>);
      const environment = await made;
      const faults = new Map<string, Fault>(
        who === 'A' && inDoubt !== undefined ? [[inDoubt, 'response-lost']] : [],
      );
      const mine = batch[0] as SQSRecord;
      handles.set(who, mine.receiptHandle);
      const invocation = new Invocation(delivery, faults, (text) => session.eventOf(text), {
        clock: scheduler.clock,
        gate: {
          settled: () => scheduler.settled(who),
          held: async (request) => {
            scheduler.enter(who);
            const deletes =
              kind !== 'hot-key' &&
              /^DeleteMessage/.test(request.step.operation) &&
              request.text.includes(mine.receiptHandle);
            let step: HeldStep;
            try {
              step = await requestStep(who, request.step, request.text, keys, {
                deletes,
                tokenRetry: request.tokenRetry,
              });
            } catch (error) {
              scheduler.leave(who);
              throw error;
            }
            const release = await scheduler.hold(step);
            // Sent with the newest receipt handle, the delete deletes (a stale one: fauxqs keeps it).
            if (deletes && release.kind === 'send' && mine.receiptHandle === message.newest) {
              message.deleted = true;
            }
            return answerOf(release, async () => {
              // The stale delete that deletes: the message goes, whatever handle the request names.
              await session.delete([{ ...mine, receiptHandle: message.newest }]);
              message.deleted = true;
            });
          },
        },
      });
      invocations.set(who, invocation);
      deadlineOf.set(who, scheduler.clock() + session.timeoutMs);
      const result = await session.invoke(environment, invocation, batch);
      let kept: SQSRecord[] = batch;
      let error = result.kind === 'threw' ? describe(result.error) : undefined;
      let acknowledgement: 'delivered' | undefined;
      if (result.kind === 'returned') {
        acknowledgement = invocation.acknowledge() === 'delivered' ? 'delivered' : undefined;
        const release = await scheduler.hold(
          heldAt(who, 'ack', 'acknowledge: the mapping deletes', { deletes: kind !== 'hot-key' }),
        );
        const answer = session.answer(batch, result.value);
        error = answer.error;
        const deleting = answer.delete.length > 0;
        if (kind === 'hot-key') {
          const deleted = await session.delete(answer.delete);
          kept = batch.filter((record) => !deleted.includes(record));
        } else if (deleting && !message.deleted) {
          const outcome = release.kind === 'stale' ? release.outcome : 'deleted';
          if (outcome === 'deleted') {
            await session.delete([{ ...mine, receiptHandle: message.newest }]);
            message.deleted = true;
            kept = [];
          }
        } else if (deleting) kept = [];
        else kept = batch;
      }
      session.record(delivery, batch, result, acknowledgement, kept, error, invocation.trace);
      if (kind === 'hot-key') undeleted.push(...kept);
      scheduler.finish(who);
    };
    await Promise.all([actor('A', 1), actor('B', 2)]);
    // What is left comes back after both deadlines (a visibility timeout at least the function timeout).
    scheduler.advanceTo(Math.max(...deadlineOf.values()) + 50);
    if (kind === 'hot-key') await session.release(undeleted);
    else if (!message.deleted) await session.release([{ receiptHandle: message.newest }]);
    // The drain's invocations in an execution environment of their own.
    await session.replaceEnvironment();
    await session.drain([], time);
  } catch (error) {
    // The cell's resources go even when the run could not finish.
    await session.close().catch(() => undefined);
    throw error;
  } finally {
    for (const each of environments)
      void Promise.resolve(each).then(
        (made) => made.destroy(),
        () => undefined,
      );
    session.environment.destroy();
  }
  const run = await session.close();
  const unused =
    scheduler.decisions.length < choices.length
      ? `the schedule names ${choices.length} choices, the run offered ${scheduler.decisions.length}`
      : undefined;
  const diverged = scheduler.diverged ?? unused;
  const notPlanned =
    diverged !== undefined
      ? [
          `not the schedule named: ${diverged} (the handler took other steps than in the run it was planned from)`,
        ]
      : [];
  const violations = [...run.violations, ...notPlanned];
  const held = violations.length === 0;
  const timedOut = scheduler.hung;
  const tone = timedOut ? 'timed-out' : !held ? 'broken' : (run.tone ?? 'exact');
  const chosen = scheduler.decisions.map((decision) => decision.chosen);
  return {
    schedule: `${kind}:${chosen.join(',')}`,
    timeline: scheduler.timeline,
    injected: chosen.some((choice) => choice !== 'A' && choice !== 'B'),
    decisions: scheduler.decisions,
    deliveries: run.deliveries,
    timedOut,
    violations,
    held,
    tone,
    summary: notPlanned.length > 0 ? 'not landed' : (run.summary ?? (held ? tone : (violations[0] ?? ''))),
    cellId: run.cell.id,
    ...(run.detail !== undefined ? { detail: run.detail } : {}),
  };
}

/**
 * B's receive: the visibility timeout of A's receive ended, so the message is visible again and B
 * receives it with a new receipt handle (A's is stale from then on). Once deleted, a standard queue
 * may still hand out a second copy ("at-least-once delivery", the SQS Developer Guide): B gets it
 * as A did. A FIFO queue never does: B receives nothing.
 */
async function receiveAgain(
  session: CellSession,
  message: { newest: string; deleted: boolean },
  first: SQSRecord,
): Promise<SQSRecord | undefined> {
  if (message.deleted) return session.settings.fifo ? undefined : first;
  await session.release([{ receiptHandle: message.newest }]);
  const [again] = await session.receive();
  if (again === undefined) return session.settings.fifo ? undefined : first;
  message.newest = again.receiptHandle;
  return again;
}

function heldAt(
  actor: Actor,
  kind: 'start' | 'ack',
  label: string,
  options: { readonly deletes?: boolean } = {},
): HeldStep {
  return {
    actor,
    kind,
    label,
    writes: [],
    transaction: false,
    deletes: options.deletes ?? false,
    tokenRetry: false,
    running: false,
  };
}

async function requestStep(
  actor: Actor,
  step: Step,
  text: string,
  keys: TableKeys,
  flags: { readonly deletes: boolean; readonly tokenRetry: boolean },
): Promise<HeldStep> {
  return {
    actor,
    kind: 'request',
    label: stepLabel(step),
    key: step.key,
    writes: step.service === 'dynamodb' ? await keys.writesOf(step.operation, text) : [],
    transaction: step.operation === 'TransactWriteItems',
    deletes: flags.deletes,
    tokenRetry: flags.tokenRetry && step.operation === 'TransactWriteItems',
    running: true,
  };
}

async function answerOf(release: Release, deleteNow: () => Promise<void>) {
  if (release.kind === 'refuse') return release.refusal;
  if (release.kind === 'stale' && release.outcome === 'deleted') await deleteNow();
  return 'send' as const;
}

interface KeyedWrite {
  readonly TableName?: string;
  readonly Key?: Record<string, unknown>;
  readonly Item?: Record<string, unknown>;
}

/** The items a DynamoDB write names, `table|key`: a Put's key read from the table's key schema. */
class TableKeys {
  private readonly schemas = new Map<string, Promise<string[]>>();
  constructor(private readonly env: CellEnvironment) {}

  /** The items a write names; none when they cannot be read (the request goes on, with no conflict offered). */
  async writesOf(operation: string, text: string): Promise<string[]> {
    try {
      return await this.readWrites(operation, text);
    } catch {
      return [];
    }
  }

  private async readWrites(operation: string, text: string): Promise<string[]> {
    let body: { TransactItems?: Record<string, KeyedWrite>[] } & KeyedWrite;
    try {
      body = JSON.parse(text);
    } catch {
      return [];
    }
    if (operation === 'TransactWriteItems') {
      return Promise.all((body.TransactItems ?? []).map((item) => this.itemOf(Object.values(item)[0] ?? {})));
    }
    if (operation === 'PutItem' || operation === 'UpdateItem' || operation === 'DeleteItem') {
      return [await this.itemOf(body)];
    }
    return [];
  }

  private async itemOf(write: KeyedWrite): Promise<string> {
    const table = write.TableName ?? '';
    let key = write.Key;
    if (key === undefined && write.Item !== undefined) {
      const names = await this.keyNames(table);
      key = Object.fromEntries(names.map((name) => [name, write.Item?.[name]]));
    }
    const sorted = Object.keys(key ?? {})
      .sort()
      .map((name) => [name, key?.[name]]);
    return `${table}|${JSON.stringify(sorted)}`;
  }

  private keyNames(table: string): Promise<string[]> {
    let names = this.schemas.get(table);
    if (names === undefined) {
      names = this.env.dynamodb
        .send(new DescribeTableCommand({ TableName: table }))
        .then((answer) => (answer.Table?.KeySchema ?? []).map((element) => element.AttributeName ?? ''));
      this.schemas.set(table, names);
    }
    return names;
  }
}

import type { SQSRecord } from 'aws-lambda';
import { type CellRun, CellSession } from './cell.js';
import type { CellEnvironment, ExecutionEnvironment } from './execution-environment.js';
import { describe, executionEnvironment } from './execution-environment.js';
import { Invocation } from './invocation.js';
import type { Scenario } from './scenario.js';
import { type Actor, type HeldStep, type Release, Scheduler, type TimelineEntry } from './scheduler.js';
import { type Fault, type Step, stepLabel } from './steps.js';
import { TableKeys } from './table-keys.js';

/**
 * One schedule of an interleaving, run: two invocations on a cell's resources, every step held by
 * the scheduler, then the drain and the invariant. interleave.ts enumerates and replays them.
 */

export type InterleavingKind = 'two-deliveries' | 'hot-key' | 'in-doubt';

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

export interface RunWithDecisions extends ScheduleRun {
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
  /** in-doubt: the first delivery's transaction whose answer is lost (its step key). */
  inDoubt?: string,
): Promise<RunWithDecisions> {
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

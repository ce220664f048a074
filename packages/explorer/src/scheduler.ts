import type { Refusal } from './invocation.js';

/**
 * The deterministic scheduler of an interleaving: two invocations (A, the first delivery; B, the
 * second) run at once, and every step either takes waits until the scheduler releases it. Only
 * one runs at a time: when both are held (or done), the scheduler picks what happens next from
 * its options, the schedule's next choice or the first option. Replaying the choices replays the
 * run; the explorer enumerates every sequence of choices depth first.
 *
 * Its options, in this order (the first is the default):
 * - `A`, `B`: release that invocation's held step (its request is sent, its acknowledgement made);
 * - `A=deleted`, `A=kept`: a delete whose receipt handle is no longer the newest (the message was
 *   received again since): AWS documents that it "will succeed, but the message might not be
 *   deleted" (DeleteMessage, the SQS API Reference), so both;
 * - `A=in-progress`: a transaction's retry after its first attempt was applied and its answer lost,
 *   answered `TransactionInProgressException`; plain `A` sends it, and DynamoDB replays the first
 *   attempt's success for its `ClientRequestToken`;
 * - `B!A`: B's write meets A's transaction, held on an item both name: DynamoDB cancels B's with
 *   `TransactionConflict` while A's is ongoing;
 * - `A-timeout`: A's deadline passes while its handler still runs: Lambda ends it, and the clock
 *   moves past the deadline (Powertools' INPROGRESS record expires then).
 */
export type Actor = 'A' | 'B';

export const ACTORS: readonly Actor[] = ['A', 'B'];

/** A step an invocation waits at, as the scheduler weighs it. */
export interface HeldStep {
  readonly actor: Actor;
  /** start: B's receive of the message; request: an attempt; ack: the mapping's delete. */
  readonly kind: 'start' | 'request' | 'ack';
  /** Words for the timeline: `TransactWriteItems evt-1`. */
  readonly label: string;
  /** The step's key (a request's), for the options' bounds. */
  readonly key?: string;
  /** The items it writes, `table|key`, in a transaction's order; empty for a read. */
  readonly writes: readonly string[];
  /** A TransactWriteItems. */
  readonly transaction: boolean;
  /** A delete of the message with the receipt handle this invocation received (stale or not: decided when released). */
  readonly deletes: boolean;
  /** A transaction's retry after an attempt applied and its answer lost. */
  readonly tokenRetry: boolean;
  /** The handler still runs (a request is held, not its acknowledgement): its deadline can pass. */
  readonly running: boolean;
}

export type Release =
  | { readonly kind: 'send' }
  | { readonly kind: 'refuse'; readonly refusal: Refusal }
  | { readonly kind: 'stale'; readonly outcome: 'deleted' | 'kept' };

/** One thing that happened, in order: the report's two columns. */
export interface TimelineEntry {
  readonly actor: Actor;
  readonly label: string;
  /** How it was answered when not plainly sent: `refused: TransactionConflict`, `stale: kept`, `deadline`. */
  readonly note?: string;
}

export interface Decision {
  readonly options: readonly string[];
  readonly chosen: string;
}

interface Waiting {
  readonly step: HeldStep;
  readonly resolve: (release: Release) => void;
}

export interface SchedulerHooks {
  /**
   * A delete's outcomes when the actor's receipt handle is stale at the moment of the decision:
   * none (it is the newest), deleted or kept (a standard queue), kept (FIFO: AWS refuses it).
   */
  staleOutcomes(actor: Actor): readonly ('deleted' | 'kept')[];
  /** Ends the actor's invocation as Lambda ends one at its deadline. */
  timeOut(actor: Actor): void;
  /** The actor's deadline on the scheduler's clock, once it started. */
  deadlineOf(actor: Actor): number | undefined;
  /** Real time a released step may take before its invocation counts as hung, ms. */
  readonly watchdogMs: number;
  /** Whether A's deadline is an option. */
  readonly deadlines: boolean;
}

/**
 * The bounds that keep the enumeration finite and small: one `TransactionInProgressException` per
 * schedule, one conflict per ongoing invocation (A's transaction refuses B's write once, and B's
 * refuses A's once: the retries after it meet no second one), one deadline.
 */
export class Scheduler {
  readonly decisions: Decision[] = [];
  readonly timeline: TimelineEntry[] = [];
  /** A choice of the schedule that was not an option here: the run is not the schedule named. */
  diverged: string | undefined;
  /** An invocation took longer than the watchdog to reach its next step. */
  hung = false;
  private readonly waiting = new Map<Actor, Waiting>();
  /** Steps an invocation sent while one of its own already waited (Promise.all): released right after it. */
  private readonly alongside = new Map<Actor, Waiting[]>();
  /** Requests between entering the gate and holding (reading their items): their invocation is busy. */
  private readonly preparing = new Map<Actor, number>();
  /** Requests released (sent) and not yet answered: with Promise.all one can be in flight while another waits. */
  private readonly sending = new Map<Actor, number>();
  private readonly finished = new Set<Actor>();
  private deciding = false;
  private readonly running = new Set<Actor>();
  private readonly used = new Set<string>();
  private readonly watchdogs = new Map<Actor, NodeJS.Timeout>();
  private now = Date.now();

  constructor(
    private readonly schedule: readonly string[],
    private readonly hooks: SchedulerHooks,
  ) {}

  /** The logical clock: each release moves it 1 ms; a deadline moves it past the deadline. */
  readonly clock = (): number => this.now;

  /** Moves the clock to `time` if it is later (the drain's wait for a visibility timeout). */
  advanceTo(time: number): void {
    this.now = Math.max(this.now, time);
  }

  /** The actor runs (until it holds a step or finishes). */
  start(actor: Actor): void {
    this.running.add(actor);
    this.watch(actor);
  }

  /** A request of the actor's entered the gate: it is busy until the request holds (or leaves). */
  enter(actor: Actor): void {
    this.preparing.set(actor, (this.preparing.get(actor) ?? 0) + 1);
  }

  /** A request that entered the gate and will not hold (reading its items failed). */
  leave(actor: Actor): void {
    this.preparing.set(actor, Math.max(0, (this.preparing.get(actor) ?? 0) - 1));
    this.next();
  }

  /** A released request was answered: its invocation no longer waits on another system. */
  settled(actor: Actor): void {
    this.sending.set(actor, Math.max(0, (this.sending.get(actor) ?? 0) - 1));
    this.next();
  }

  /** The actor waits at a step until the scheduler releases it (a request: after `enter`). */
  hold(step: HeldStep): Promise<Release> {
    return new Promise<Release>((resolve) => {
      if (step.kind === 'request') {
        this.preparing.set(step.actor, Math.max(0, (this.preparing.get(step.actor) ?? 0) - 1));
      }
      // An invocation that finished (ended at its deadline, or hung) takes no further step.
      if (this.finished.has(step.actor)) return;
      if (this.waiting.has(step.actor)) {
        // Sent at once with the step that waits (Promise.all): not interleaved, released with it.
        this.alongside.set(step.actor, [...(this.alongside.get(step.actor) ?? []), { step, resolve }]);
        this.next();
        return;
      }
      this.unwatch(step.actor);
      this.running.delete(step.actor);
      this.waiting.set(step.actor, { step, resolve });
      this.next();
    });
  }

  /** The actor is done: returned and acknowledged, threw, or ended. Whatever it still had in hand goes. */
  finish(actor: Actor): void {
    this.finished.add(actor);
    this.unwatch(actor);
    this.running.delete(actor);
    this.waiting.delete(actor);
    this.alongside.delete(actor);
    this.preparing.delete(actor);
    this.sending.delete(actor);
    this.next();
  }

  /** The options when every live invocation is held: see the class's comment. */
  options(): string[] {
    const options: string[] = [];
    for (const actor of ACTORS) {
      const held = this.waiting.get(actor)?.step;
      if (held === undefined) continue;
      const stale = held.deletes ? this.hooks.staleOutcomes(actor) : [];
      if (stale.length > 1) options.push(...stale.map((outcome) => `${actor}=${outcome}`));
      else options.push(actor);
      if (held.tokenRetry && !this.used.has('in-progress')) options.push(`${actor}=in-progress`);
    }
    for (const [holder, other] of [
      ['A', 'B'],
      ['B', 'A'],
    ] as const) {
      const ongoing = this.waiting.get(holder)?.step;
      const meets = this.waiting.get(other)?.step;
      // A transaction meets another write on its item, or a write meets a transaction on its item:
      // DynamoDB refuses the one that comes second while the first is ongoing.
      if (ongoing === undefined || meets === undefined || meets.kind !== 'request') continue;
      if (!ongoing.transaction && !meets.transaction) continue;
      if (ongoing.writes.length === 0 || this.used.has(`conflict ${holder}`)) continue;
      if (meets.writes.some((item) => ongoing.writes.includes(item))) options.push(`${other}!${holder}`);
    }
    const a = this.waiting.get('A')?.step;
    if (this.hooks.deadlines && a?.running === true && !this.used.has('deadline')) options.push('A-timeout');
    return options;
  }

  /** Something runs: an invocation between steps, a request reading its items, or one sent and not yet answered. */
  private busy(): boolean {
    return (
      this.running.size > 0 ||
      [...this.preparing.values(), ...this.sending.values()].some((count) => count > 0)
    );
  }

  /**
   * Decides once every invocation waits or is done: after the event loop's pending callbacks, so
   * that a request an invocation sends at once with another reaches its hold first.
   */
  private next(): void {
    if (this.deciding || this.busy() || this.waiting.size === 0) return;
    this.deciding = true;
    setImmediate(() => {
      this.deciding = false;
      if (!this.busy() && this.waiting.size > 0) this.decide();
    });
  }

  private decide(): void {
    const options = this.options();
    let chosen = options[0] as string;
    if (options.length > 1) {
      const wanted = this.schedule[this.decisions.length];
      if (wanted !== undefined) {
        if (options.includes(wanted)) chosen = wanted;
        else
          this.diverged ??= `choice ${this.decisions.length + 1}, ${wanted}, is not an option here (${options.join(' ')})`;
      }
      this.decisions.push({ options, chosen });
    }
    this.apply(chosen);
  }

  private apply(choice: string): void {
    if (choice === 'A-timeout') {
      this.used.add('deadline');
      const held = this.waiting.get('A');
      this.waiting.delete('A');
      this.running.add('A');
      this.timeline.push({ actor: 'A', label: held?.step.label ?? 'A', note: 'deadline: ended' });
      this.now = Math.max(this.now, (this.hooks.deadlineOf('A') ?? this.now) + 1);
      this.hooks.timeOut('A');
      return;
    }
    const conflict = /^([AB])!([AB])$/.exec(choice);
    if (conflict !== null) {
      const [, refused, holder] = conflict as unknown as [string, Actor, Actor];
      const ongoing = this.waiting.get(holder)?.step as HeldStep;
      this.used.add(`conflict ${holder}`);
      const meets = this.waiting.get(refused) as Waiting;
      const conflicting = meets.step.writes.flatMap((item, index) =>
        ongoing.writes.includes(item) ? [index] : [],
      );
      this.release(
        refused,
        {
          kind: 'refuse',
          refusal: { kind: 'transaction-conflict', conflicting },
        },
        meets.step.transaction
          ? `refused: TransactionConflict (${holder}'s write ongoing)`
          : `refused: TransactionConflictException (${holder}'s transaction ongoing)`,
      );
      return;
    }
    const [actor, outcome] = choice.split('=') as [Actor, string | undefined];
    const held = this.waiting.get(actor) as Waiting;
    if (outcome === 'in-progress') {
      this.used.add('in-progress');
      this.release(
        actor,
        { kind: 'refuse', refusal: { kind: 'transaction-in-progress' } },
        'refused: TransactionInProgressException',
      );
    } else if (outcome === 'deleted' || outcome === 'kept') {
      this.release(actor, { kind: 'stale', outcome }, `stale receipt handle: ${outcome}`);
    } else if (held.step.deletes && this.hooks.staleOutcomes(actor).length === 1) {
      // FIFO: a stale receipt handle's delete is refused (the handle expired): the message stays.
      // The consumer's own delete hears the refusal; the mapping's is not the handler's business.
      this.release(
        actor,
        held.step.kind === 'request'
          ? { kind: 'refuse', refusal: { kind: 'receipt-handle-expired' } }
          : { kind: 'stale', outcome: 'kept' },
        'stale receipt handle (FIFO): refused, kept',
      );
    } else {
      this.release(actor, { kind: 'send' }, held.step.tokenRetry ? 'token retry: replayed' : undefined);
    }
  }

  private release(actor: Actor, release: Release, note: string | undefined): void {
    const held = this.waiting.get(actor) as Waiting;
    this.waiting.delete(actor);
    this.timeline.push({ actor, label: held.step.label, ...(note !== undefined ? { note } : {}) });
    this.now += 1;
    this.start(actor);
    if (held.step.kind === 'request') this.sending.set(actor, (this.sending.get(actor) ?? 0) + 1);
    held.resolve(release);
    for (const other of this.alongside.get(actor)?.splice(0) ?? []) {
      this.timeline.push({
        actor,
        label: other.step.label,
        note: 'sent at once with the step before: not interleaved',
      });
      this.sending.set(actor, (this.sending.get(actor) ?? 0) + 1);
      other.resolve({ kind: 'send' });
    }
  }

  /** A released invocation that reaches no step in real time is hung: ended as at its deadline. */
  private watch(actor: Actor): void {
    this.unwatch(actor);
    const timer = setTimeout(() => {
      this.hung = true;
      this.hooks.timeOut(actor);
    }, this.hooks.watchdogMs);
    timer.unref();
    this.watchdogs.set(actor, timer);
  }

  private unwatch(actor: Actor): void {
    clearTimeout(this.watchdogs.get(actor));
    this.watchdogs.delete(actor);
  }
}

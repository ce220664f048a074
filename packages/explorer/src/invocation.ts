import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import { type Refusal, refusalResponse } from './refusals.js';
import { ACKNOWLEDGE, type Fault, type Service, type Step, stepKey } from './steps.js';

export type { Refusal } from './refusals.js';

/**
 * One invocation of a consumer in a cell, in this process: the steps it takes, each traced, and
 * the one fault the plan puts at a step. A kill is a process's death seen from outside: the step
 * never leaves (or its answer never arrives), nothing the invocation does afterwards reaches
 * another system (each later request never settles and is never sent), and its return value is
 * never delivered. Requests are attributed to their invocation through async context, so an
 * abandoned invocation's stragglers can never pass for the next one's.
 */
export class Invocation {
  readonly trace: Step[] = [];
  private dead = false;
  private markEnded!: (how: { readonly kind: 'killed' | 'timed-out' }) => void;
  /** Resolves when the invocation is killed, or ended at its deadline. */
  private readonly ended = new Promise<{ readonly kind: 'killed' | 'timed-out' }>((resolve) => {
    this.markEnded = resolve;
  });
  /** Per `event|operation`: sends seen so far. */
  private readonly occurrences = new Map<string, number>();
  /** Per send (the SDK's invocation id, or the charge's body): its occurrence, and whether it is refused. */
  private readonly sends = new Map<string, { occurrence: number; refused: boolean; appliedLost?: boolean }>();

  constructor(
    /** Which delivery of the scenario's batch this is: 1, 2, … */
    readonly delivery: number,
    /** Step key → its fault, for this delivery. */
    private readonly faults: ReadonlyMap<string, Fault>,
    /** The event a request names, from its text: an id, `batch` (several) or `-` (none). */
    private readonly eventOf: (text: string) => string,
    private readonly scheduled: {
      /**
       * An interleaving's scheduler: each step waits here until it is released, and hears how it
       * is answered (sent, or a refusal DynamoDB documents for a concurrent request).
       */
      readonly gate?: Gate;
      /** The invocation's time (an interleaving's logical clock): its `Date.now` while it runs. */
      readonly clock?: () => number;
    } = {},
  ) {}

  /** The logical clock an interleaving runs this invocation on; none: the wall clock. */
  get clock(): (() => number) | undefined {
    return this.scheduled.clock;
  }

  private get gate(): Gate | undefined {
    return this.scheduled.gate;
  }

  /**
   * Runs the handler as this invocation: what it returned or threw, or that it was killed. At
   * `deadline` (the function timeout) it is ended as Lambda ends it, like a kill: nothing it does
   * afterwards reaches another system.
   */
  async run<T>(
    handler: () => Promise<T>,
    deadline: number,
  ): Promise<
    | { readonly kind: 'returned'; readonly value: T }
    | { readonly kind: 'threw'; readonly error: unknown }
    | { readonly kind: 'killed' }
    | { readonly kind: 'timed-out' }
  > {
    const outcome = invocations.run(this, async () => {
      try {
        return { kind: 'returned' as const, value: await handler() };
      } catch (error) {
        return { kind: 'threw' as const, error };
      }
    });
    // Held by a scheduler, its time is logical (a held step takes none), and the scheduler ends it.
    const now = this.clock?.() ?? Date.now();
    const timer =
      this.gate === undefined
        ? setTimeout(() => this.die('timed-out'), Math.max(0, deadline - now))
        : undefined;
    try {
      return await Promise.race([outcome, this.ended]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The acknowledgement, a step of its own: killed before it (the return never reaches the
   * mapping), or not applied (the mapping's delete never happens); else the mapping deletes what
   * the response says.
   */
  acknowledge(): 'delivered' | 'killed' | 'not-applied' {
    const step: Step = {
      key: stepKey('batch', ACKNOWLEDGE, 1, 1),
      service: 'mapping',
      event: 'batch',
      operation: ACKNOWLEDGE,
      occurrence: 1,
      attempt: 1,
    };
    this.trace.push(step);
    const fault = this.faults.get(step.key);
    if (fault === 'killed-before') this.die();
    return fault === undefined ? 'delivered' : fault === 'killed-before' ? 'killed' : 'not-applied';
  }

  /**
   * One attempt of a request: traced, then sent or faulted as the plan says. `send` makes the
   * attempt and yields its answer; `apply` makes it and discards the answer (a response lost);
   * `lost` is the answer a lost response gets (a 500).
   */
  async step<R>(request: {
    readonly service: Service;
    readonly operation: string;
    readonly text: string;
    readonly sendId: string;
    readonly attempt: number;
    readonly send: () => Promise<R>;
    readonly apply?: () => Promise<unknown>;
    readonly lost: () => R;
    /** A refusal the service documents, answered instead of sending (an interleaving's conflict). */
    readonly refuse?: (refusal: Refusal) => R;
  }): Promise<R> {
    if (this.dead) return never();
    const event = this.eventOf(request.text);
    let send = this.sends.get(request.sendId);
    if (send === undefined) {
      const name = `${event}|${request.operation}`;
      const occurrence = (this.occurrences.get(name) ?? 0) + 1;
      this.occurrences.set(name, occurrence);
      send = { occurrence, refused: false };
      this.sends.set(request.sendId, send);
    }
    // A refused attempt never leaves: it is the fault's consequence, not a step.
    if (send.refused) return request.lost();
    const step: Step = {
      key: stepKey(event, request.operation, send.occurrence, request.attempt),
      service: request.service,
      event,
      operation: request.operation,
      occurrence: send.occurrence,
      attempt: request.attempt,
    };
    this.trace.push(step);
    const fault = this.faults.get(step.key);
    if (this.gate !== undefined) {
      const answer = await this.gate.held({
        step,
        text: request.text,
        tokenRetry: send.appliedLost === true,
      });
      if (this.dead) return never();
      const gate = this.gate;
      if (answer !== 'send') {
        gate.settled();
        if (request.refuse === undefined)
          throw new TypeError(`${step.key} cannot be refused (${answer.kind})`);
        return request.refuse(answer);
      }
      // The scheduler waits for the answer before it lets the other invocation go.
      return this.attempt(request, fault, send).finally(() => gate.settled());
    }
    return this.attempt(request, fault, send);
  }

  /** The attempt as the plan's fault at it says: sent, applied and its answer lost, or killed. */
  private async attempt<R>(
    request: {
      readonly send: () => Promise<R>;
      readonly apply?: () => Promise<unknown>;
      readonly lost: () => R;
    },
    fault: Fault | undefined,
    send: { refused: boolean; appliedLost?: boolean },
  ): Promise<R> {
    const apply = request.apply ?? request.send;
    if (fault === 'response-lost' || fault === 'lost-error-seen') send.appliedLost = true;
    switch (fault) {
      case undefined:
        return request.send();
      case 'killed-before':
        this.die();
        return never();
      case 'response-lost':
        await apply();
        return request.lost();
      case 'lost-then-killed':
        await apply();
        this.die();
        return never();
      case 'lost-error-seen':
        await apply();
        send.refused = true;
        return request.lost();
      case 'ack-not-applied':
        return request.send();
    }
  }

  /** Ends it as Lambda ends an invocation at its deadline (the scheduler's clock passed it). */
  timeOut(): void {
    this.die('timed-out');
  }

  private die(kind: 'killed' | 'timed-out' = 'killed'): void {
    if (this.dead) return;
    this.dead = true;
    this.markEnded({ kind });
  }
}

/** Where an interleaving's scheduler holds an invocation's steps. */
export interface Gate {
  held(request: {
    readonly step: Step;
    readonly text: string;
    /** An attempt of a transaction whose earlier attempt was applied and its answer lost: its token replays. */
    readonly tokenRetry: boolean;
  }): Promise<'send' | Refusal>;
  /** A released request was answered (or refused): the invocation goes on by itself. */
  settled(): void;
}

const invocations = new AsyncLocalStorage<Invocation>();

const wallClock = Date.now;
let logicalTimeUsers = 0;

/**
 * While an interleaving runs, `Date.now` inside an invocation with a logical clock reads that
 * clock (Powertools' INPROGRESS expiry, a core's `clock` default, the Lambda context's remaining
 * time); everywhere else it is the wall clock. Returns the function that puts the wall clock back
 * when the last user is done.
 */
export function useLogicalTime(): () => void {
  if (logicalTimeUsers === 0) Date.now = () => currentInvocation()?.clock?.() ?? wallClock();
  logicalTimeUsers += 1;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    logicalTimeUsers -= 1;
    if (logicalTimeUsers === 0) Date.now = wallClock;
  };
}

/** The invocation whose request is being made now, if any (the mapping's and the lab's own are in none). */
export function currentInvocation(): Invocation | undefined {
  return invocations.getStore();
}

/** Never settles: what a dead process's request is. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}

interface RequestLike {
  readonly headers: Record<string, string | undefined>;
  readonly body?: unknown;
}

interface HandlerLike {
  handle(request: RequestLike, options?: unknown): Promise<{ response: unknown }>;
}

/**
 * Makes every attempt an SDK client sends within an invocation a step of it: the client's own
 * retries run as deployed, each attempt traced and faultable. `isStep` tells the consumer's
 * requests from the lab's (counters, evidence records), which pass untraced.
 */
export function interceptClient<C extends { readonly config: { readonly requestHandler: unknown } }>(
  client: C,
  service: 'dynamodb' | 'sqs',
  isStep: () => boolean = () => true,
): C {
  const handler = client.config.requestHandler as HandlerLike;
  if (typeof handler?.handle !== 'function') {
    throw new TypeError(`the ${service} client has no request handler to intercept`);
  }
  const original = handler.handle.bind(handler);
  handler.handle = (request, options) => {
    const invocation = currentInvocation();
    if (invocation === undefined || !isStep()) return original(request, options);
    const target = header(request, 'x-amz-target') ?? '';
    return invocation.step({
      service,
      operation: target.slice(target.lastIndexOf('.') + 1) || 'request',
      text: textOf(request.body),
      sendId: header(request, 'amz-sdk-invocation-id') ?? String(Math.random()),
      attempt: Number(/attempt=(\d+)/.exec(header(request, 'amz-sdk-request') ?? '')?.[1] ?? 1),
      send: () => original(request, options),
      apply: async () => drain((await original(request, options)).response),
      lost: () => ({ response: lostResponse(service) }),
      refuse: (refusal) => ({ response: refusalResponse(refusal, textOf(request.body)) }),
    });
  };
  return client;
}

/**
 * A fetch whose every call within an invocation is a step (an HTTP service's; the lab's payment
 * client). A call is keyed on its method, URL and body: the same request sent again within one
 * invocation is the next attempt of it (a client's retry, with an idempotency key the same key),
 * another URL or body another request. Its event is read from the URL and the body.
 */
export function interceptFetch(base: typeof fetch = fetch, operation = 'fetch'): typeof fetch {
  const attempts = new WeakMap<Invocation, Map<string, number>>();
  return (input, init) => {
    const invocation = currentInvocation();
    if (invocation === undefined) return base(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const body = typeof init?.body === 'string' ? init.body : '';
    const request = `${method} ${url} ${body}`;
    const seen = attempts.get(invocation) ?? new Map<string, number>();
    attempts.set(invocation, seen);
    const attempt = (seen.get(request) ?? 0) + 1;
    seen.set(request, attempt);
    return invocation.step({
      service: 'http',
      operation,
      text: `${url} ${body}`,
      sendId: request,
      attempt,
      send: () => base(input, init),
      apply: async () => (await base(input, init)).arrayBuffer(),
      lost: () =>
        new Response(
          JSON.stringify({ error: { type: 'api_error', message: 'the explorer lost this response' } }),
          {
            status: 500,
            headers: { 'content-type': 'application/json' },
          },
        ),
    });
  };
}

function header(request: RequestLike, name: string): string | undefined {
  for (const [key, value] of Object.entries(request.headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** A 500 as a lost connection gets: the SDK counts it transient and retries. */
function lostResponse(service: 'dynamodb' | 'sqs') {
  const type = service === 'dynamodb' ? 'InternalServerError' : 'InternalError';
  return {
    statusCode: 500,
    reason: 'Internal Server Error',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'explorer-lost' },
    body: Readable.from([
      Buffer.from(JSON.stringify({ __type: type, message: 'the explorer lost this response' })),
    ]),
  };
}

async function drain(response: unknown): Promise<void> {
  const body = (response as { body?: unknown }).body;
  if (body instanceof Readable) for await (const _ of body);
}

function textOf(body: unknown): string {
  if (typeof body === 'string') return body;
  // The SDK's JSON protocols hand over bytes (a Uint8Array whose string methods warn): read them as bytes.
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return '';
}

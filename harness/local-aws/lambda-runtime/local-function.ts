import {
  ExecutionEnvironment,
  type FunctionSpec,
  INIT_TIMEOUT,
  InitError,
  type InvocationResult,
} from './execution-environment.js';

/** Faults injected into one invocation (docs/design.md, "Fault model"); both optional. */
export interface FunctionInvokeOptions {
  /**
   * An injected kill: the environment is SIGKILLed at this fraction, in [0, 1), of the function's
   * typical invocation (the median of its recent successful ones), unless it finishes first.
   */
  readonly killAtFraction?: number;
  /** An injected slow consumer: time spent in the environment before the handler runs. */
  readonly workDelayMs?: number;
}

/** A kill drawn before any invocation succeeded still lands somewhere in the first few ms. */
const MIN_TYPICAL_INVOCATION_MS = 20;
const RECENT_DURATIONS = 51;

export interface FunctionStats {
  invocations: number;
  /** Environments started by an invocation that found none warm (its init delays that invocation). */
  coldStarts: number;
  /** Environments initialised ahead of any invocation (prewarm), as provisioned concurrency does. */
  prewarmed: number;
  /** The longest init (the module scope) of any environment, prewarmed or cold, in ms. */
  slowestInitMs: number;
  /** Environments that died mid-invocation (the handlers' crashes and injected kills alike). */
  exits: number;
  /** Of the exits, those caused by an injected kill (killAtFraction) that landed. */
  injectedKills: number;
  timeouts: number;
  handlerErrors: number;
  /** Environments that died between invocations. */
  idleDeaths: number;
  /** The longest invocation so far (init excluded), in ms: compare with the function timeout. */
  slowestInvocationMs: number;
  /** Peak resident set size of any environment of this function, in KiB. */
  peakRssKb: number;
  /**
   * Σ invocation durations (init excluded), each rounded up to 1 ms as Lambda bills them, over
   * every invocation whatever its outcome: what a cost model multiplies by the function's memory.
   */
  billedDurationMs: number;
}

/**
 * A function in the local Lambda service: a pool of execution environments, reused while warm,
 * replaced after they die. Each environment serves one invocation at a time, so the pool grows to
 * the concurrency it is driven at — the event source mapping's maximum concurrency.
 */
export class LocalFunction {
  readonly stats: FunctionStats = {
    invocations: 0,
    coldStarts: 0,
    prewarmed: 0,
    slowestInitMs: 0,
    exits: 0,
    injectedKills: 0,
    timeouts: 0,
    handlerErrors: 0,
    idleDeaths: 0,
    slowestInvocationMs: 0,
    peakRssKb: 0,
    billedDurationMs: 0,
  };
  private readonly idle: ExecutionEnvironment[] = [];
  private readonly live = new Set<ExecutionEnvironment>();
  /** Durations of the latest successful invocations, oldest first. */
  private readonly recentDurations: number[] = [];
  private stopped = false;

  constructor(readonly spec: FunctionSpec) {}

  /** Invokes the handler; throws InitError if a new environment cannot start its handler. */
  async invoke(event: unknown, options: FunctionInvokeOptions = {}): Promise<InvocationResult> {
    if (this.stopped) throw new Error(`${this.spec.name} is stopped`);
    // As on AWS, the init has its own limit (10 s) and the function timeout counts from the invoke;
    // the visibility clock, which started at the receive, counts both (the mapping's overruns).
    const environment = this.takeWarm() ?? (await this.coldStart());
    this.stats.invocations += 1;
    const started = performance.now();
    const result = await environment.invoke(event, {
      ...(options.workDelayMs ? { workDelayMs: options.workDelayMs } : {}),
      ...(options.killAtFraction === undefined
        ? {}
        : { killAfterMs: options.killAtFraction * this.typicalInvocationMs() }),
    });
    const durationMs = performance.now() - started;
    this.stats.slowestInvocationMs = Math.max(this.stats.slowestInvocationMs, Math.round(durationMs));
    this.stats.billedDurationMs += Math.ceil(durationMs);
    this.count(result, durationMs);

    if (environment.alive && !this.stopped) this.idle.push(environment);
    else this.live.delete(environment);
    return result;
  }

  /**
   * Initialises environments until `count` are warm, all at once, before any invocation needs
   * them — what provisioned concurrency does on AWS. Without it the first batches of a run all
   * cold-start together; with it they run warm. Throws InitError if a handler cannot initialise
   * (not if its init only took longer than the init limit: that environment cold-starts later).
   */
  async prewarm(count: number): Promise<void> {
    const missing = Math.max(0, count - this.live.size);
    const started = await Promise.allSettled(
      Array.from({ length: missing }, () => ExecutionEnvironment.start(this.spec)),
    );
    for (const result of started) {
      if (result.status !== 'fulfilled') continue;
      const environment = result.value;
      this.live.add(environment);
      this.stats.prewarmed += 1;
      this.stats.slowestInitMs = Math.max(this.stats.slowestInitMs, Math.round(environment.initMs));
      if (this.stopped) await environment.stop();
      else this.idle.push(environment);
    }
    // An init that is only slow (a loaded machine) leaves its slot to a cold start later; a module
    // scope that throws is a bug no retry fixes.
    const failed = started.find(
      (result) =>
        result.status === 'rejected' &&
        !(result.reason instanceof InitError && result.reason.error.name === INIT_TIMEOUT),
    );
    if (failed?.status === 'rejected') throw failed.reason;
  }

  /** Kills every environment and waits until their processes have exited. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.idle.length = 0;
    await Promise.all([...this.live].map((environment) => environment.stop()));
    this.live.clear();
  }

  private count(result: InvocationResult, durationMs: number): void {
    if (result.status === 'ok') {
      this.stats.peakRssKb = Math.max(this.stats.peakRssKb, result.maxRssKb);
      this.recentDurations.push(durationMs);
      if (this.recentDurations.length > RECENT_DURATIONS) this.recentDurations.shift();
    } else if (result.errorType === 'Runtime.ExitError') {
      this.stats.exits += 1;
      if (result.injectedKill) this.stats.injectedKills += 1;
    } else if (result.errorType === 'Sandbox.Timedout') this.stats.timeouts += 1;
    else this.stats.handlerErrors += 1;
  }

  /** The median of recent successful invocations: a kill drawn in [0, it) lands mid-work. */
  private typicalInvocationMs(): number {
    const sorted = [...this.recentDurations].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    return Math.max(MIN_TYPICAL_INVOCATION_MS, median);
  }

  /** A warm environment, skipping any that died while idle (Lambda replaces those too). */
  private takeWarm(): ExecutionEnvironment | undefined {
    for (let environment = this.idle.pop(); environment; environment = this.idle.pop()) {
      if (environment.alive) return environment;
      this.live.delete(environment);
      this.stats.idleDeaths += 1;
    }
    return undefined;
  }

  private async coldStart(): Promise<ExecutionEnvironment> {
    const environment = await ExecutionEnvironment.start(this.spec);
    this.stats.coldStarts += 1;
    this.stats.slowestInitMs = Math.max(this.stats.slowestInitMs, Math.round(environment.initMs));
    this.live.add(environment);
    if (this.stopped) await environment.stop();
    return environment;
  }
}

import { ExecutionEnvironment, type FunctionSpec, type InvocationResult } from './execution-environment.js';

export interface FunctionStats {
  invocations: number;
  coldStarts: number;
  /** Environments that died mid-invocation (injected crashes show up here). */
  exits: number;
  timeouts: number;
  handlerErrors: number;
  /** Environments that died between invocations. */
  idleDeaths: number;
  /** The longest invocation so far (init excluded), in ms: compare with the function timeout. */
  slowestInvocationMs: number;
  /** Peak resident set size of any environment of this function, in KiB. */
  peakRssKb: number;
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
    exits: 0,
    timeouts: 0,
    handlerErrors: 0,
    idleDeaths: 0,
    slowestInvocationMs: 0,
    peakRssKb: 0,
  };
  private readonly idle: ExecutionEnvironment[] = [];
  private readonly live = new Set<ExecutionEnvironment>();
  private stopped = false;

  constructor(readonly spec: FunctionSpec) {}

  /** Invokes the handler; throws InitError if a new environment cannot start its handler. */
  async invoke(event: unknown): Promise<InvocationResult> {
    if (this.stopped) throw new Error(`${this.spec.name} is stopped`);
    const environment = this.takeWarm() ?? (await this.coldStart());
    this.stats.invocations += 1;
    const started = performance.now();
    const result = await environment.invoke(event);
    this.stats.slowestInvocationMs = Math.max(
      this.stats.slowestInvocationMs,
      Math.round(performance.now() - started),
    );
    if (result.status === 'ok') this.stats.peakRssKb = Math.max(this.stats.peakRssKb, result.maxRssKb);
    else if (result.errorType === 'Runtime.ExitError') this.stats.exits += 1;
    else if (result.errorType === 'Sandbox.Timedout') this.stats.timeouts += 1;
    else this.stats.handlerErrors += 1;

    if (environment.alive && !this.stopped) this.idle.push(environment);
    else this.live.delete(environment);
    return result;
  }

  /** Kills every environment and waits until their processes have exited. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.idle.length = 0;
    await Promise.all([...this.live].map((environment) => environment.stop()));
    this.live.clear();
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
    this.live.add(environment);
    if (this.stopped) await environment.stop();
    return environment;
  }
}

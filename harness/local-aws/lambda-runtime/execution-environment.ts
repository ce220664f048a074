import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { registerWithWatchdog } from '../watchdog/watchdog.js';
import type { EnvironmentMessage, InvokeMessage, SerializedError } from './protocol.js';

const INIT_TIMEOUT_MS = 10_000;
/**
 * Node 22.1+ keeps the V8 code it compiled for a module here and reuses it in the next process
 * that loads the same file: an environment's init (parsing a 400 KB bundle) is shorter from the
 * second environment on (Node 24: about 120–140 ms instead of 160–230 ms). Node 20 ignores it.
 */
const COMPILE_CACHE_DIR = join(tmpdir(), `delivery-semantics-node-compile-cache-${userInfo().uid}`);
/** The error name of an init that did not finish in time (as opposed to one that threw). */
export const INIT_TIMEOUT = 'Sandbox.Timedout';

/**
 * Every environment process this harness started and that has not exited, starting ones included.
 * However the harness ends (a second Ctrl-C, process.exit, an uncaught error), none outlives it.
 */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** What the local Lambda service knows about one function. */
export interface FunctionSpec {
  readonly name: string;
  /** The esbuild bundle exporting `handler` (the same build the stack deploys). */
  readonly bundlePath: string;
  /** The worker bundle that hosts a handler inside a child process. */
  readonly workerPath: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
  readonly environment: Readonly<Record<string, string>>;
  /** Where the environment's stdout/stderr (the function's logs) go. */
  readonly logSink?: Writable;
  /** The Node binary that runs it (the function's runtime). @default this process's Node */
  readonly nodePath?: string;
  /** The bundle's export that handles events (a Handler's part after the dot). @default 'handler' */
  readonly exportName?: string;
}

export type InvocationResult =
  | { readonly status: 'ok'; readonly response: unknown; readonly maxRssKb: number }
  | {
      readonly status: 'error';
      /** Lambda's error types: a thrown error, a process exit, a timeout, a failed init. */
      readonly errorType: 'Handler' | 'Runtime.ExitError' | 'Sandbox.Timedout' | 'Runtime.InitError';
      readonly message: string;
      /** The death was an injected kill (it looks like any other Runtime.ExitError to the caller). */
      readonly injectedKill?: boolean;
    };

/** How one invocation differs from a plain one; every field is optional. */
export interface EnvironmentInvokeOptions {
  readonly requestId?: string;
  /**
   * An injected slow consumer: the environment waits this long before calling the handler, and the
   * invocation's timeout grows by as much, so the delay can outlive the messages' visibility.
   */
  readonly workDelayMs?: number;
  /** An injected kill: SIGKILL the process this long after the invocation is handed to it. */
  readonly killAfterMs?: number;
}

/** Raised when an environment cannot even start its handler (a configuration or packaging bug). */
export class InitError extends Error {
  override readonly name = 'InitError';
  constructor(
    readonly functionName: string,
    readonly error: SerializedError,
  ) {
    super(`${functionName} failed to initialise: ${error.name}: ${error.message}`);
  }
}

/**
 * One execution environment: a child process running the worker, which imports the handler once
 * (cold start) and then serves invocations one at a time. It dies with the handler (SIGKILL,
 * crash) or when the invocation times out, and is never reused after that.
 */
export class ExecutionEnvironment {
  private exited = false;
  /** Set the moment we decide to kill, so the pool never hands out an environment about to die. */
  private killed = false;
  private readonly closed: Promise<void>;
  private exitDescription = '';
  /** The kill was injected: the exit it causes is reported as one. */
  private killInjected = false;
  private pending:
    | {
        requestId: string;
        resolve: (result: InvocationResult) => void;
        timer: NodeJS.Timeout;
        killTimer: NodeJS.Timeout | undefined;
      }
    | undefined;

  private constructor(
    private readonly spec: FunctionSpec,
    private readonly child: ChildProcess,
    /** How long the handler's module scope took (the init phase), in ms. */
    readonly initMs: number,
  ) {
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
    child.on('message', (message: EnvironmentMessage) => this.onMessage(message));
    child.on('exit', (code, signal) => this.onExit(code, signal));
    // A process that died before its exit event was processed fails a send with EPIPE; without
    // this listener that error would take the whole harness down.
    child.on('error', (error) => this.onChannelError(error));
  }

  get alive(): boolean {
    return !this.exited && !this.killed;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Starts a process and waits for the handler's module scope to finish (the init phase). */
  static start(spec: FunctionSpec): Promise<ExecutionEnvironment> {
    const child = fork(spec.workerPath, [], {
      ...(spec.nodePath ? { execPath: spec.nodePath } : {}),
      env: {
        PATH: process.env.PATH ?? '',
        NODE_OPTIONS: '--enable-source-maps',
        NODE_COMPILE_CACHE: COMPILE_CACHE_DIR,
        AWS_LAMBDA_FUNCTION_NAME: spec.name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        LOCAL_LAMBDA_BUNDLE: spec.bundlePath,
        ...(spec.exportName ? { LOCAL_LAMBDA_EXPORT: spec.exportName } : {}),
        ...spec.environment,
      },
      // Lambda caps the heap to the function's memory; a leak here dies like it would there.
      execArgv: [`--max-old-space-size=${spec.memoryMb}`],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    running.add(child);
    child.once('exit', () => running.delete(child));
    // An environment leaves on IPC disconnect when the harness dies, unless its handler is stuck in
    // synchronous code: the watchdog kills it then.
    if (child.pid !== undefined) child.once('exit', registerWithWatchdog({ pid: child.pid }));
    if (spec.logSink) {
      for (const output of [child.stdout, child.stderr]) if (output) forwardLogs(output, spec.logSink);
    } else {
      child.stdout?.resume();
      child.stderr?.resume();
    }
    return new Promise((resolve, reject) => {
      const fail = (error: SerializedError) => {
        cleanup();
        // A late 'error' from the dying process must not be unhandled.
        child.on('error', () => undefined);
        child.kill('SIGKILL');
        reject(new InitError(spec.name, error));
      };
      // Lambda gives the init phase 10 s; a module scope that hangs must not block its poller forever.
      const initTimer = setTimeout(
        () =>
          fail({
            name: INIT_TIMEOUT,
            message: `init did not finish within ${INIT_TIMEOUT_MS / 1000} s`,
          }),
        INIT_TIMEOUT_MS,
      );
      const onError = (error: Error) => fail({ name: error.name, message: error.message });
      const onReady = (message: EnvironmentMessage) => {
        if (message.type === 'ready') {
          cleanup();
          resolve(new ExecutionEnvironment(spec, child, message.initMs));
        } else if (message.type === 'init-error') {
          fail(message.error);
        }
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        cleanup();
        reject(
          new InitError(spec.name, {
            name: 'Runtime.ExitError',
            message: `exited during init (${signal ?? code})`,
          }),
        );
      };
      const cleanup = () => {
        clearTimeout(initTimer);
        child.off('message', onReady);
        child.off('exit', onExit);
        child.off('error', onError);
      };
      child.on('message', onReady);
      child.on('exit', onExit);
      child.on('error', onError);
    });
  }

  invoke(event: unknown, options: EnvironmentInvokeOptions = {}): Promise<InvocationResult> {
    if (!this.alive) throw new Error(`environment of ${this.spec.name} is dead; start a new one`);
    if (this.pending) throw new Error(`environment of ${this.spec.name} is busy; one invocation at a time`);
    const requestId = options.requestId ?? randomUUID();
    const timeoutMs = this.spec.timeoutMs + (options.workDelayMs ?? 0);
    // As on AWS, the function timeout counts from the invoke (a cold start's init has its own limit).
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // Lambda stops a timed-out invocation by discarding the environment.
        this.kill();
        this.settle({
          status: 'error',
          errorType: 'Sandbox.Timedout',
          message: `Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`,
        });
      }, timeoutMs);
      // A timer, not a code point: the kill can land anywhere, a DynamoDB request in flight included.
      const killTimer =
        options.killAfterMs === undefined
          ? undefined
          : setTimeout(() => this.injectKill(), options.killAfterMs);
      this.pending = { requestId, resolve, timer, killTimer };
      const message: InvokeMessage = {
        type: 'invoke',
        requestId,
        event,
        deadline: Date.now() + timeoutMs,
        ...(options.workDelayMs ? { workDelayMs: options.workDelayMs } : {}),
      };
      this.child.send(message, (error) => {
        if (error) this.onChannelError(error);
      });
    });
  }

  kill(): void {
    if (this.killed) return;
    this.killed = true;
    if (!this.exited) this.child.kill('SIGKILL');
  }

  private injectKill(): void {
    if (this.killed) return;
    this.killInjected = true;
    this.kill();
  }

  /** Resolves once the process has exited and its output pipes are closed (so logs are complete). */
  async stop(): Promise<void> {
    this.kill();
    await this.closed;
  }

  private onMessage(message: EnvironmentMessage): void {
    if (message.type !== 'result' || message.requestId !== this.pending?.requestId) return;
    this.settle(
      message.ok
        ? { status: 'ok', response: message.response, maxRssKb: message.maxRssKb }
        : {
            status: 'error',
            errorType: 'Handler',
            message: `${message.error.name}: ${message.error.message}`,
          },
    );
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exited = true;
    this.exitDescription = signal ? `signal ${signal}` : `exit code ${code}`;
    this.settle({
      status: 'error',
      errorType: 'Runtime.ExitError',
      message: `RequestId: ${this.pending?.requestId} Error: Runtime exited with ${this.exitDescription}`,
      ...(this.killInjected ? { injectedKill: true } : {}),
    });
  }

  private onChannelError(error: Error): void {
    this.kill();
    this.settle({
      status: 'error',
      errorType: 'Runtime.ExitError',
      message: `RequestId: ${this.pending?.requestId} Error: environment unreachable (${error.message})`,
    });
  }

  private settle(result: InvocationResult): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    clearTimeout(pending.killTimer);
    pending.resolve(result);
  }
}

/**
 * Sources paused until their sink drains, per sink. One sink takes the output of every environment
 * of a function over a run; pipe() would add an 'error' (and 'drain', 'close', …) listener to it per
 * source and trip the max-listeners warning with a handful of live environments. Instead each sink
 * carries at most one 'drain' and one 'close' listener, whatever the number of sources.
 */
const pausedBySink = new Map<Writable, Set<Readable>>();

/** Copies an environment's output into a shared sink, pausing the source while the sink is full. */
function forwardLogs(source: Readable, sink: Writable): void {
  const onData = (chunk: Buffer) => {
    if (!sink.writable) return; // the sink ended or failed: logs are best effort, never fatal
    if (!sink.write(chunk)) pauseUntilDrained(source, sink);
  };
  source.on('data', onData);
  source.once('close', () => {
    source.off('data', onData);
    pausedBySink.get(sink)?.delete(source);
  });
}

function pauseUntilDrained(source: Readable, sink: Writable): void {
  source.pause();
  const waiting = pausedBySink.get(sink);
  if (waiting) {
    waiting.add(source);
    return;
  }
  const paused = new Set([source]);
  pausedBySink.set(sink, paused);
  // A sink that closes instead of draining must not leave its sources paused (and their
  // processes blocked on a full pipe).
  const resumeAll = () => {
    sink.off('drain', resumeAll);
    sink.off('close', resumeAll);
    pausedBySink.delete(sink);
    for (const waitingSource of paused) waitingSource.resume();
  };
  sink.on('drain', resumeAll);
  sink.on('close', resumeAll);
}

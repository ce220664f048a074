import { type ChildProcess, fork, type Serializable } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLING, PROJECT_ROOT } from '../../../stack/bundling.js';
import { cachedBuild } from '../../local-aws/bundling/bundle-cache.js';
import { registerWithWatchdog } from '../../local-aws/watchdog/watchdog.js';
import type { ChildReport } from './protocol.js';

/** The producer and the relay, bundled once per source change (the local runtime's cache). */
export interface OutboxBundles {
  readonly producer: string;
  readonly relay: string;
}

const ENTRIES = {
  'outbox-producer': fileURLToPath(new URL('./producer-process.ts', import.meta.url)),
  'outbox-relay': fileURLToPath(new URL('./relay-process.ts', import.meta.url)),
};

/**
 * Bundled rather than run with tsx: a crash restarts a process, and a bundle starts in a fraction
 * of tsx's time. Built for the Node running the harness, as the local runtime builds its handlers.
 */
export async function outboxBundles(): Promise<OutboxBundles> {
  const folder = await cachedBuild([
    {
      absWorkingDir: PROJECT_ROOT,
      entryPoints: ENTRIES,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: `node${process.versions.node}`,
      // Minified: a restart after every crash parses it again (a third less startup time than unminified).
      minify: true,
      sourcemap: true,
      conditions: [...BUNDLING.conditions],
      banner: { js: BUNDLING.banner },
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    },
  ]);
  return { producer: join(folder, 'outbox-producer.mjs'), relay: join(folder, 'outbox-relay.mjs') };
}

/** How a producer or relay process ended, with what it said last. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** It announced an injected crash (and the positions it was at) before it died. */
  readonly crashedAt?: readonly number[];
  /** It reported a failure (its error), or exited without one: an error for the harness. */
  readonly failure?: string;
  /** The end of its stderr, for error messages. */
  readonly stderr: string;
}

export interface RunningChild {
  readonly pid: number | undefined;
  /** Its first message: the work. Until then the process is a standby with its module scope run. */
  begin(work: Serializable): void;
  send(message: Serializable): void;
  /** Resolves once it exited and every report it sent was read. */
  readonly ended: Promise<ChildExit>;
  kill(): void;
}

/** Every process started here that has not exited: none outlives the harness, however it ends. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

const STDERR_TAIL = 4_000;

export function startChild(input: {
  readonly role: 'producer' | 'relay';
  readonly bundlePath: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly onReport: (report: ChildReport) => void;
}): RunningChild {
  const child = fork(input.bundlePath, [], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_OPTIONS: '--enable-source-maps',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...input.environment,
      OUTBOX_PROCESS: input.role,
    },
    execArgv: [],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  running.add(child);
  // SIGKILLed with the harness by the watchdog, should the harness itself be SIGKILLed.
  const unregister = child.pid !== undefined ? registerWithWatchdog({ pid: child.pid }) : () => undefined;
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-STDERR_TAIL);
  });
  let crashedAt: readonly number[] | undefined;
  let failure: string | undefined;
  child.on('message', (report: ChildReport) => {
    if (report.type === 'crashing') crashedAt = report.positions;
    if (report.type === 'failed') failure = report.error;
    input.onReport(report);
  });
  // A send to a process that just died fails with EPIPE: its exit tells the story.
  child.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      unregister();
      resolve({ code, signal });
    }),
  );
  // The channel closes after its last message was read: only then are the reports complete.
  const disconnected = new Promise<void>((resolve) => {
    if (!child.connected) resolve();
    else child.once('disconnect', resolve);
  });
  const stderrClosed = new Promise<void>((resolve) => {
    if (!child.stderr) resolve();
    else child.stderr.once('close', resolve);
  });
  const ended = Promise.all([exited, disconnected, stderrClosed]).then(([{ code, signal }]) => {
    const clean = code === 0 && failure === undefined;
    const injected = signal === 'SIGKILL' && crashedAt !== undefined;
    return {
      code,
      signal,
      ...(crashedAt ? { crashedAt } : {}),
      ...(clean || injected
        ? {}
        : { failure: failure ?? `the ${input.role} process ended with ${signal ?? `exit code ${code}`}` }),
      stderr: stderr.trim(),
    };
  });
  return {
    pid: child.pid,
    begin: (work) => {
      if (child.connected) child.send(work);
    },
    send: (message) => {
      if (child.connected) child.send(message);
    },
    ended,
    kill: () => {
      child.kill('SIGKILL');
    },
  };
}

/**
 * Processes started ahead of need, like standby replicas: when the running one dies, the next
 * takes over without waiting for Node to start and load its bundle (about half a second on a busy
 * 2-core machine). One waits: more would compete for the cores with the work itself.
 */
export class Standby {
  private readonly waiting: RunningChild[] = [];

  constructor(
    private readonly start: () => RunningChild,
    private readonly depth = 1,
  ) {}

  /** The longest-waiting process (or a new one); the standby is filled up again. */
  take(): RunningChild {
    const taken = this.waiting.shift() ?? this.start();
    while (this.waiting.length < this.depth) this.waiting.push(this.start());
    return taken;
  }

  dispose(): void {
    for (const child of this.waiting.splice(0)) child.kill();
  }
}

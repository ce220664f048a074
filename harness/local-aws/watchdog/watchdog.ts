/**
 * A process that cleans up after this one when it cannot clean up after itself: `kill -9`, the OOM
 * killer, a crash in native code. Exit hooks run on none of those, so without it DynamoDB Local's
 * JVM would be reparented to init and keep running, and the bundle folder would stay in the temp dir.
 *
 * One watchdog per process, started on first use. It reads registrations from a pipe whose only
 * write end this process holds; the kernel closes that end however this process ends, and at EOF
 * the watchdog SIGKILLs the processes and removes the folders still registered, then exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./watchdog-process.mjs', import.meta.url));

/** A process to SIGKILL, or a folder to remove, should this process die without cleaning up. */
export type WatchedResource = { readonly pid: number } | { readonly dir: string };

type Message = { readonly op: 'add' | 'remove' } & WatchedResource;

let watchdog: ChildProcess | undefined;
/** Set once the watchdog could not start or its pipe broke: registrations are then no-ops. */
let unavailable = false;

/**
 * Registers `resource` with the watchdog; returns the function that unregisters it (idempotent).
 *
 * Unregister a process as soon as it has exited (its 'exit' event), not when asked to stop: once it
 * is reaped its pid may be handed to an unrelated process. (On Linux the watchdog also compares
 * start times before killing, so a late unregister cannot hit a recycled pid.) Unregister a folder
 * once it is removed.
 *
 * Best effort: if the watchdog cannot run, the harness still works, it only loses the cleanup after
 * a forced kill, and says so once on stderr.
 */
export function registerWithWatchdog(resource: WatchedResource): () => void {
  if ('pid' in resource && !(Number.isSafeInteger(resource.pid) && resource.pid > 0)) {
    throw new RangeError(`registerWithWatchdog: not a process id: ${resource.pid}`);
  }
  if ('dir' in resource && resource.dir === '') {
    throw new RangeError('registerWithWatchdog: empty folder path');
  }
  send({ op: 'add', ...resource });
  let registered = true;
  return () => {
    if (!registered) return;
    registered = false;
    send({ op: 'remove', ...resource });
  };
}

/** Pid of this process's watchdog, once started (for tests and diagnostics). */
export function watchdogPid(): number | undefined {
  return watchdog?.pid;
}

function send(message: Message): void {
  const stdin = started()?.stdin;
  if (stdin == null || stdin.destroyed) return;
  stdin.write(`${JSON.stringify(message)}\n`);
}

function started(): ChildProcess | undefined {
  if (watchdog !== undefined || unavailable) return watchdog;
  const fail = (error: Error): void => {
    if (unavailable) return;
    unavailable = true;
    watchdog = undefined;
    process.stderr.write(
      `warning: the cleanup watchdog is not running (${error.message}); ` +
        'if this process is killed with SIGKILL, DynamoDB Local and the bundle folder may be left behind\n',
    );
  };
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [SCRIPT, String(process.pid)], {
      // Its own process group: a Ctrl-C reaches the harness, which stops things in order, while the
      // watchdog stays to see the pipe close. Output ignored: open pipes or a shared terminal would
      // let it hold up whoever reads this process's output.
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
      // Nothing of ours (NODE_OPTIONS with a loader, say) must slow down or break a plain .mjs.
      env: { PATH: process.env.PATH ?? '' },
    });
  } catch (error) {
    fail(error instanceof Error ? error : new Error(String(error)));
    return undefined;
  }
  child.once('error', fail);
  // EPIPE: the watchdog died (someone killed it); the harness carries on without it.
  child.stdin?.on('error', fail);
  child.once('exit', (code, signal) => {
    if (!unavailable) fail(new Error(`it exited early (${signal ?? `exit code ${code}`})`));
  });
  // Neither the process nor the pipe may keep this process's event loop alive.
  child.unref();
  unrefPipe(child.stdin);
  watchdog = child;
  return child;
}

function unrefPipe(stream: ChildProcess['stdin']): void {
  // A child's stdin pipe is a net.Socket at run time, though typed as a plain Writable.
  const socket = stream as { unref?: () => void } | null;
  socket?.unref?.();
}

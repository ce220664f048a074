import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerWithWatchdog } from '../watchdog/watchdog.js';

/** A child process the harness started (an emulator, the payment provider), and how it ends. */
export interface SupervisedChild {
  /** Its pid once spawned; rejects with the spawn error. */
  readonly spawned: Promise<number>;
  /** Resolves on 'close': the process is reaped and its last output read. */
  readonly exited: Promise<void>;
  /** SIGTERM, then SIGKILL after the grace (SIGKILL at once with none); resolves once it is reaped. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Makes sure the harness never leaves `child` behind. It is registered with the watchdog before
 * anything can fail or wait, since a SIGKILL of this process runs no exit hook and the child would
 * be reparented to init and run on; unregistered once reaped, as its pid may then be reused. If this
 * process exits without stop() (process.exit, an uncaught error), the child is killed with it.
 */
export function supervise(child: ChildProcess, stopGraceMs: number): SupervisedChild {
  if (child.pid !== undefined) child.once('exit', registerWithWatchdog({ pid: child.pid }));
  const spawned = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      if (child.pid === undefined) reject(new Error('spawned without a pid'));
      else resolve(child.pid);
    });
  });
  // Awaited by the caller; this keeps an early rejection from counting as unhandled meanwhile.
  spawned.catch(() => undefined);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let stopping: Promise<void> | undefined;
  return {
    spawned,
    exited,
    stop: () => {
      stopping ??= terminate(child, exited, stopGraceMs).finally(() =>
        process.removeListener('exit', killOnExit),
      );
      return stopping;
    },
  };
}

async function terminate(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    if (graceMs <= 0) {
      // No grace: a child with nothing to save is killed outright.
      child.kill('SIGKILL');
    } else {
      child.kill('SIGTERM');
      // Unref'd: the grace must not keep this process alive for its length once the child is gone.
      const graceful = await Promise.race([exited.then(() => true), sleep(graceMs, false, { ref: false })]);
      if (!graceful) child.kill('SIGKILL');
    }
  }
  await exited;
}

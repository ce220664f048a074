// The watchdog process started by harness/local-aws/watchdog/watchdog.ts. Plain JavaScript on purpose: it runs with
// bare `node`, with no loader, so it starts in tens of milliseconds and never depends on tsx.
//
// Protocol: one JSON object per line on stdin —
//   {"op":"add","pid":123} {"op":"remove","pid":123} {"op":"add","dir":"/tmp/x"} {"op":"remove","dir":"/tmp/x"}
// When stdin ends (the parent closed it or died, however it died) or the parent is gone, every
// registered process is SIGKILLed and every registered folder removed; then this process exits.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';

const PARENT_POLL_MS = 1_000;

const parent = Number(process.argv[2]);
/** pid → its start time (clock ticks since boot) when registered; undefined where /proc is missing. */
const pids = new Map();
const dirs = new Set();
const procfs = existsSync('/proc/self/stat');

/** Start time of `pid`, or undefined if it is gone; with the pid it names one process for good. */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; fields after the last ')' do not.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); start time is field 22. A zombie has already exited.
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

function apply(line) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return; // a torn or foreign line must not stop the watchdog from doing its one job
  }
  if (typeof message !== 'object' || message === null) return;
  const { op, pid, dir } = message;
  if (Number.isSafeInteger(pid) && pid > 0) {
    if (op === 'remove') pids.delete(pid);
    else if (op === 'add') {
      const started = procfs ? startTime(pid) : undefined;
      // Already gone: remembering the pid could only ever kill whoever gets it next.
      if (procfs && started === undefined) return;
      pids.set(pid, started);
    }
  } else if (typeof dir === 'string' && dir !== '') {
    if (op === 'remove') dirs.delete(dir);
    else if (op === 'add') dirs.add(dir);
  }
}

let cleaning = false;
function cleanUpAndExit() {
  if (cleaning) return;
  cleaning = true;
  for (const [pid, started] of pids) {
    // A registered process that exited without being unregistered may have handed its pid on.
    if (procfs && startTime(pid) !== started) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  // Processes first, so nothing still writes into a folder while it is removed.
  for (const dir of dirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // nothing more a watchdog can do about it; the next run sweeps stale bundle folders
    }
  }
  process.exit(0);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
lines.on('line', apply);
// readline's 'close' comes after the last 'line', so even registrations written just before the
// parent died are honoured.
lines.on('close', cleanUpAndExit);
process.stdin.on('error', cleanUpAndExit);
// Belt and braces: should the pipe somehow stay open (a process that inherited its write end),
// being reparented still means the parent is gone.
setInterval(() => {
  if (process.ppid !== parent) cleanUpAndExit();
}, PARENT_POLL_MS);

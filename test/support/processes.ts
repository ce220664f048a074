/** The processes a test started, as Linux's /proc shows them (the machines the experiment runs on). */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  /** Clock ticks since boot: with the pid, names one process even if the pid is reused later. */
  readonly startTime: string;
  readonly command: string;
}

/** `pid` as it is now, or undefined if it has exited (a zombie has exited: it only awaits its reaper). */
export function processInfo(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined;
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { pid, ppid: Number(fields[1]), startTime: fields[19] ?? '', command };
  } catch {
    return undefined;
  }
}

/** Every live process below `root`, found by walking parent pids in /proc. */
export function descendants(root: number): ProcessInfo[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => processInfo(Number(name)) ?? []);
  const found: ProcessInfo[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const children = all.filter((info) => frontier.includes(info.ppid));
    found.push(...children);
    frontier = children.map((info) => info.pid);
  }
  return found;
}

/** The processes of `recorded` that still run (same pid and start time). */
export function survivors(recorded: readonly ProcessInfo[]): ProcessInfo[] {
  return recorded.filter((info) => processInfo(info.pid)?.startTime === info.startTime);
}

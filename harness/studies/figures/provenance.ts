/**
 * Where a committed figure came from, and whether the code it measured has changed since: each
 * summary records the date, the commit, the machine and the command of its run, and a fingerprint
 * of every folder of code it measured. A folder whose tracked files differ now (or that is gone)
 * makes the figure stale, and its caption says so (docs/testing.md, "Figures in the docs").
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../../stack/bundling.js';

export interface Provenance {
  /** The day of the run (UTC), `YYYY-MM-DD`. */
  readonly on: string;
  /** The commit the run measured (short), with `+` when the code it measured had uncommitted changes. */
  readonly commit: string;
  readonly machine: string;
  /** How to run it again. */
  readonly command: string;
  /** Per folder (or file) of the code it measured, the fingerprint of its source files then. */
  readonly code: Readonly<Record<string, string>>;
}

const git = (...args: string[]): string => execFileSync('git', args, { cwd: PROJECT_ROOT, encoding: 'utf8' });

/** The fingerprint of a path that is no longer in the tree. */
export const GONE = 'gone';

/**
 * The fingerprint of a folder's (or file's) source: its tracked files under it, tests excluded
 * unless the path is the tests' own (test/), in code-point order, each path and its content with
 * line endings made LF, hashed. Untracked and generated files do not count; a checkout's line
 * endings do not either.
 */
export function fingerprint(path: string): string {
  const tests = path.startsWith('test');
  const files = git('ls-files', '-z', '--', path)
    .split('\0')
    .filter(
      (file) => file !== '' && (tests || !/\.test\.ts$/.test(file)) && existsSync(join(PROJECT_ROOT, file)),
    )
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (files.length === 0) return GONE;
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\n`);
    hash.update(readFileSync(join(PROJECT_ROOT, file), 'utf8').replaceAll('\r\n', '\n'));
  }
  return hash.digest('hex').slice(0, 16);
}

/** The folders of `provenance.code` whose source has changed since the run, or is gone. */
export function changedSince(provenance: Provenance): string[] {
  return Object.entries(provenance.code)
    .filter(([path, print]) => fingerprint(path) !== print)
    .map(([path]) => path);
}

/**
 * This checkout's commit and this machine, for a summary recorded from a report `reportedAt`:
 * a report older than the last commit that touched the code it measured was measured on other
 * code, and is refused.
 */
export function provenanceNow(command: string, code: readonly string[], reportedAt: Date): Provenance {
  const lastChange = git('log', '-1', '--format=%cI', '--', ...code).trim();
  if (lastChange !== '' && reportedAt.getTime() < Date.parse(lastChange))
    throw new Error(
      `the report (${reportedAt.toISOString()}) is older than the last commit to the code it measures (${lastChange}): run \`${command}\` again`,
    );
  const dirty = git('status', '--porcelain', '--', ...code).trim() !== '';
  return {
    on: reportedAt.toISOString().slice(0, 10),
    commit: `${git('rev-parse', '--short', 'HEAD').trim()}${dirty ? '+' : ''}`,
    machine: `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.versions.node}`,
    command,
    code: Object.fromEntries(code.map((path) => [path, fingerprint(path)])),
  };
}

/** The caption above a rendered figure: its run, and a warning when the code it measured changed. */
export function caption(provenance: Provenance): string {
  const changed = changedSince(provenance);
  const stale =
    changed.length === 0
      ? ''
      : ` **Stale: ${changed.map((path) => `\`${path}\``).join(', ')} changed since; re-measure.**`;
  return `*Measured ${provenance.on} at ${provenance.commit} on ${provenance.machine}: \`${provenance.command}\`.*${stale}`;
}

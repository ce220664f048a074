/**
 * Where a committed figure came from, and whether the code it measured has changed since: each
 * summary records the date, the commit, the machine and the command of its run, and a fingerprint
 * of every folder of code it measured. A folder whose files differ now makes the figure stale, and
 * its caption says so (the staleness rule: docs/testing.md, "Figures in the docs").
 */

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
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

/**
 * Source files under `path`, in a stable order: generated folders excluded, and tests too unless
 * the path is the tests' own (test/: what the testing times measure).
 */
function sourceFiles(path: string, tests = path.startsWith('test')): string[] {
  const full = join(PROJECT_ROOT, path);
  if (statSync(full).isFile()) return [path];
  return readdirSync(full, { withFileTypes: true })
    .filter((entry) => !['node_modules', 'dist'].includes(entry.name) && (tests || entry.name !== 'test'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const child = `${path.replace(/\/$/, '')}/${entry.name}`;
      if (entry.isDirectory()) return sourceFiles(child, tests);
      return /\.(ts|mjs|json)$/.test(entry.name) && (tests || !entry.name.endsWith('.test.ts'))
        ? [child]
        : [];
    });
}

/** The fingerprint of a folder's source: its files' paths and contents, hashed. */
export function fingerprint(path: string): string {
  const hash = createHash('sha256');
  for (const file of sourceFiles(path)) {
    hash.update(`${file}\n`);
    hash.update(readFileSync(join(PROJECT_ROOT, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

/** The folders of `provenance.code` whose source has changed since the run. */
export function changedSince(provenance: Provenance): string[] {
  return Object.entries(provenance.code)
    .filter(([path, print]) => fingerprint(path) !== print)
    .map(([path]) => path);
}

/** This checkout's commit and this machine, for a summary being recorded now. */
export function provenanceNow(command: string, code: readonly string[], on: Date): Provenance {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();
  // Uncommitted changes to the code it measures (not to the docs being rendered) make the commit approximate.
  const dirty = git('status', '--porcelain', '--', ...code) !== '';
  return {
    on: on.toISOString().slice(0, 10),
    commit: `${git('rev-parse', '--short', 'HEAD')}${dirty ? '+' : ''}`,
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

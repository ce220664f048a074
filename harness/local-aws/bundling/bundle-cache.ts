/**
 * Bundles keyed by what went into them: the esbuild options and the content of every input file
 * esbuild read (its metafile), so a run, or a test file, bundles only after a source or a dependency
 * changed. Entries are immutable folders named by that key; writers build aside and rename, so
 * concurrent runs (parallel test files) never see a half-written entry.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BuildOptions, build, version as esbuildVersion, type Metafile } from 'esbuild';

/**
 * Entries live directly in the temp dir, at the depth of the runs' own bundle folders: source maps
 * name their sources by a path relative to the bundle, which must stay right where it is linked.
 */
const ENTRY_PREFIX = 'delivery-semantics-bundle-cache-';
const MANIFEST = 'inputs.json';
/** Entries of the same options that are older than this and not the newest few are removed. */
const PRUNE_AFTER_MS = 24 * 60 * 60 * 1000;
const KEEP_NEWEST = 4;

interface Manifest {
  /** Absolute input path → sha256 of its content when the entry was built. */
  readonly inputs: Readonly<Record<string, string>>;
}

/**
 * The folder holding the outputs of `builds` (esbuild options without outdir), from the cache when
 * every input is unchanged, built into it otherwise. The caller must not write into it.
 */
export async function cachedBuild(builds: readonly BuildOptions[], cacheRoot = tmpdir()): Promise<string> {
  const workingDir = builds[0]?.absWorkingDir ?? process.cwd();
  // What esbuild reads without listing it as an input: the TypeScript settings and the resolved
  // dependency tree.
  const settings = ['tsconfig.json', 'package-lock.json'].map((name) => hashOf(join(workingDir, name)));
  const optionsKey = `${ENTRY_PREFIX}${sha256(JSON.stringify({ esbuildVersion, builds, settings })).slice(0, 16)}`;
  await removeAbandonedStaging(cacheRoot);
  const hit = await findEntry(cacheRoot, optionsKey);
  if (hit) {
    // Used now: a prune (by age) leaves it alone.
    const now = new Date();
    await utimes(hit, now, now).catch(() => undefined);
    return hit;
  }

  await mkdir(cacheRoot, { recursive: true });
  const staging = join(
    cacheRoot,
    `${optionsKey}.staging-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  );
  try {
    let inputs: Record<string, string> = {};
    // A source saved while esbuild read it would be cached under its new content: build again.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const startedAt = Date.now();
      const results = await Promise.all(
        builds.map((options) => build({ ...options, outdir: staging, metafile: true, write: true })),
      );
      const files = inputFiles(
        results.map((result) => result.metafile as Metafile),
        workingDir,
      );
      inputs = hashAll(files);
      if (!(await changedSince(files, startedAt))) break;
    }
    await writeFile(join(staging, MANIFEST), JSON.stringify({ inputs } satisfies Manifest));
    const entry = join(cacheRoot, `${optionsKey}-${sha256(JSON.stringify(inputs)).slice(0, 16)}`);
    // Another run may have built the same entry meanwhile: theirs is as good as ours.
    await rename(staging, entry).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
    await prune(cacheRoot, optionsKey, entry);
    return entry;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The newest entry of these options whose every input still has the content it was built from. */
async function findEntry(cacheRoot: string, optionsKey: string): Promise<string | undefined> {
  const entries = await entriesOf(cacheRoot, optionsKey);
  for (const { path } of entries) {
    const manifest = await readFile(join(path, MANIFEST), 'utf8').then(
      (text) => JSON.parse(text) as Manifest,
      () => undefined,
    );
    if (manifest && Object.entries(manifest.inputs).every(([file, hash]) => hashOf(file) === hash)) {
      return path;
    }
  }
  return undefined;
}

async function entriesOf(cacheRoot: string, optionsKey: string) {
  const names = (await readdir(cacheRoot).catch(() => [] as string[])).filter(
    (name) => name.startsWith(optionsKey) && !name.includes('.staging-'),
  );
  const entries = await Promise.all(
    names.map(async (name) => {
      const path = join(cacheRoot, name);
      const mtimeMs = await stat(path).then(
        (info) => info.mtimeMs,
        () => 0,
      );
      return { path, mtimeMs };
    }),
  );
  return entries.sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/**
 * Old entries go: of these options, all but the newest few; of other options (an older checkout,
 * another esbuild), any unused for a week. Recent ones may still be in use by a run.
 */
async function prune(cacheRoot: string, optionsKey: string, keep: string): Promise<void> {
  const entries = await entriesOf(cacheRoot, optionsKey);
  const stale = entries
    .slice(KEEP_NEWEST)
    .filter(({ path, mtimeMs }) => path !== keep && Date.now() - mtimeMs > PRUNE_AFTER_MS);
  const others = await entriesOf(cacheRoot, ENTRY_PREFIX);
  const abandoned = others.filter(
    ({ path, mtimeMs }) => !path.includes(optionsKey) && Date.now() - mtimeMs > 7 * PRUNE_AFTER_MS,
  );
  await Promise.all([...stale, ...abandoned].map(({ path }) => rm(path, { recursive: true, force: true })));
}

function inputFiles(metafiles: readonly Metafile[], workingDir: string): string[] {
  // esbuild names inputs relative to its working directory; some are virtual (no file).
  const files = new Set(metafiles.flatMap((metafile) => Object.keys(metafile.inputs)));
  return [...files].map((file) => resolve(workingDir, file)).sort();
}

function hashAll(files: readonly string[]): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const file of files) {
    const hash = hashOf(file);
    if (hash !== undefined) inputs[file] = hash;
  }
  return inputs;
}

/** Whether any file was modified after `since`: while the build read it. */
async function changedSince(files: readonly string[], since: number): Promise<boolean> {
  const times = await Promise.all(
    files.map((file) =>
      stat(file).then(
        (info) => info.mtimeMs,
        () => 0,
      ),
    ),
  );
  return times.some((mtimeMs) => mtimeMs > since);
}

/** Staging folders of builds whose process is gone (killed mid-build). */
async function removeAbandonedStaging(cacheRoot: string): Promise<void> {
  const names = await readdir(cacheRoot).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const owner = new RegExp(`^${ENTRY_PREFIX}[0-9a-f]+\\.staging-(\\d+)-`).exec(name)?.[1];
      if (owner === undefined || isAlive(Number(owner))) return;
      await rm(join(cacheRoot, name), { recursive: true, force: true });
    }),
  );
}

function hashOf(path: string): string | undefined {
  try {
    return sha256(readFileSync(path));
  } catch {
    return undefined;
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Whether a process is alive (another user's included), for folders named by their owner's pid. */
export function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Bundles keyed by what went into them: the esbuild options and the content of every input file
 * esbuild read (its metafile), so a run, or a test file, bundles only after a source or a dependency
 * changed. Entries are immutable folders named by that key; writers build aside and rename, so
 * concurrent runs (parallel test files) never see a half-written entry.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
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
  const optionsKey = `${ENTRY_PREFIX}${sha256(JSON.stringify({ esbuildVersion, builds })).slice(0, 16)}`;
  const hit = await findEntry(cacheRoot, optionsKey);
  if (hit) return hit;

  const staging = join(
    cacheRoot,
    `${optionsKey}.staging-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  );
  await mkdir(cacheRoot, { recursive: true });
  try {
    const results = await Promise.all(
      builds.map((options) => build({ ...options, outdir: staging, metafile: true, write: true })),
    );
    const inputs = hashInputs(
      results.map((result) => result.metafile as Metafile),
      builds[0]?.absWorkingDir ?? process.cwd(),
    );
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
  const names = (await readdir(cacheRoot).catch(() => [])).filter(
    (name) => name.startsWith(`${optionsKey}-`) && !name.includes('.staging-'),
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

/** Old entries of the same options go; recent ones may still be in use by a run. */
async function prune(cacheRoot: string, optionsKey: string, keep: string): Promise<void> {
  const entries = await entriesOf(cacheRoot, optionsKey);
  const stale = entries
    .slice(KEEP_NEWEST)
    .filter(({ path, mtimeMs }) => path !== keep && Date.now() - mtimeMs > PRUNE_AFTER_MS);
  await Promise.all(stale.map(({ path }) => rm(path, { recursive: true, force: true })));
}

function hashInputs(metafiles: readonly Metafile[], workingDir: string): Record<string, string> {
  const files = new Set(metafiles.flatMap((metafile) => Object.keys(metafile.inputs)));
  const inputs: Record<string, string> = {};
  for (const file of [...files].sort()) {
    // esbuild names inputs relative to its working directory; some are virtual (no file).
    const path = resolve(workingDir, file);
    const hash = hashOf(path);
    if (hash !== undefined) inputs[path] = hash;
  }
  return inputs;
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

import { rmSync } from 'node:fs';
import { copyFile, link, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { BUNDLING, handlerEntry, PROJECT_ROOT } from '../../../stack/bundling.js';
import { registerWithWatchdog } from '../watchdog/watchdog.js';
import { cachedBuild, isAlive } from './bundle-cache.js';

export interface Bundles {
  /** `<name>` → the bundle of its entry file (stack/bundling.ts: `modes/<name>.ts`, the verifier, the services). */
  readonly handlers: Readonly<Record<string, string>>;
  /** The execution-environment worker. */
  readonly worker: string;
  readonly dispose: () => Promise<void>;
}

const WORKER_ENTRY = fileURLToPath(new URL('../lambda-runtime/worker.ts', import.meta.url));
const FOLDER_PREFIX = 'delivery-semantics-bundles-';
/** `<prefix><owner pid>-<mkdtemp suffix>`: the owner pid tells a later run whether the folder is stale. */
const OWNED_FOLDER = new RegExp(`^${FOLDER_PREFIX}(\\d+)-[A-Za-z0-9]{6}$`);
/** Folders named before the owner pid was part of the name; old enough means no run still uses them. */
const UNOWNED_FOLDER = new RegExp(`^${FOLDER_PREFIX}[A-Za-z0-9]{6}$`);
const UNOWNED_STALE_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * Bundles handlers with the same esbuild options the stack's NodejsFunction uses (stack/bundling.ts),
 * into a private temporary folder, so the local runtime runs what would be deployed.
 */
export async function bundleHandlers(
  names: readonly string[],
  options: {
    readonly outdir?: string;
    /** esbuild's target for the handlers. @default the Node running this process (the local runtime's) */
    readonly target?: string;
  } = {},
): Promise<Bundles> {
  let outdir = options.outdir;
  let unregister = (): void => undefined;
  if (outdir === undefined) {
    await removeStaleBundleFolders();
    outdir = await mkdtemp(join(tmpdir(), `${FOLDER_PREFIX}${process.pid}-`));
    // Exit hooks do not run on SIGKILL; the watchdog removes the folder then.
    unregister = registerWithWatchdog({ dir: outdir });
  }
  const builds = buildOptions(names, options.target ?? LOCAL_TARGET);
  try {
    if (options.outdir === undefined) {
      // The run's own folder holds links to the cached bundles, so the watchdog can remove it
      // like before while the cache entry stays for the next run.
      await linkAll(await cachedBuild(builds), outdir);
    } else {
      await Promise.all(builds.map((build_) => build({ ...build_, outdir })));
    }
  } catch (error) {
    if (options.outdir === undefined) await rm(outdir, { recursive: true, force: true });
    unregister();
    throw error;
  }
  if (options.outdir !== undefined) {
    return { ...paths(outdir, names), dispose: async () => undefined };
  }
  // A temporary folder is removed however the process ends: a forced exit here, a SIGKILL by the watchdog.
  const folder = outdir;
  const removeOnExit = () => rmSync(folder, { recursive: true, force: true });
  process.once('exit', removeOnExit);
  return {
    ...paths(folder, names),
    dispose: async () => {
      process.removeListener('exit', removeOnExit);
      await rm(folder, { recursive: true, force: true });
      unregister();
    },
  };
}

/**
 * The bundles run on this machine's Node (20, 22 or 24), not on the Lambda runtime the stack pins,
 * so they are built for it: a target newer than the Node that runs them could leave syntax it
 * cannot parse. The cache key includes the target, so each Node version gets its own bundles.
 */
const LOCAL_TARGET = `node${process.versions.node}`;

/** The handlers' build (as the stack's NodejsFunction does it, for the local Node) and the worker's. */
function buildOptions(names: readonly string[], target: string): BuildOptions[] {
  return [
    {
      absWorkingDir: PROJECT_ROOT,
      entryPoints: Object.fromEntries(names.map((name) => [name, handlerEntry(name)])),
      bundle: true,
      platform: BUNDLING.platform,
      format: BUNDLING.format,
      target,
      minify: BUNDLING.minify,
      sourcemap: BUNDLING.sourcemap,
      mainFields: [...BUNDLING.mainFields],
      conditions: [...BUNDLING.conditions],
      banner: { js: BUNDLING.banner },
      external: [...BUNDLING.externalModules],
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    },
    {
      absWorkingDir: PROJECT_ROOT,
      entryPoints: { worker: WORKER_ENTRY },
      bundle: true,
      conditions: [...BUNDLING.conditions],
      platform: 'node',
      format: 'esm',
      target: LOCAL_TARGET,
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    },
  ];
}

/** Hard links (a copy where the file system refuses) of every bundle and map in `from`. */
async function linkAll(from: string, to: string): Promise<void> {
  const files = (await readdir(from)).filter((name) => name.endsWith('.mjs') || name.endsWith('.mjs.map'));
  await Promise.all(
    files.map((name) =>
      link(join(from, name), join(to, name)).catch(() => copyFile(join(from, name), join(to, name))),
    ),
  );
}

/**
 * Removes the bundle folders of runs that are gone (killed before the watchdog existed, or with
 * it). A folder whose owner is alive is left alone, whichever user or checkout it belongs to.
 * Best effort: a folder that cannot be read or removed is skipped, never a reason not to run.
 */
export async function removeStaleBundleFolders(directory: string = tmpdir()): Promise<string[]> {
  const entries = await readdir(directory).catch(() => []);
  const removed = await Promise.all(
    entries.map(async (name) => {
      const owned = OWNED_FOLDER.exec(name);
      const path = join(directory, name);
      const stale =
        owned !== null
          ? !isAlive(Number(owned[1]))
          : UNOWNED_FOLDER.test(name) &&
            (await stat(path).then(
              (info) => Date.now() - info.mtimeMs > UNOWNED_STALE_AFTER_MS,
              () => false,
            ));
      if (!stale) return [];
      return rm(path, { recursive: true, force: true }).then(
        () => [path],
        () => [],
      );
    }),
  );
  return removed.flat();
}

function paths(outdir: string, names: readonly string[]) {
  return {
    handlers: Object.fromEntries(names.map((name) => [name, join(outdir, `${name}.mjs`)])),
    worker: join(outdir, 'worker.mjs'),
  };
}

import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLING, handlerEntry } from '../lib/bundling.js';

export interface Bundles {
  /** `<name>` → the bundle of `functions/<name>.ts`. */
  readonly handlers: Readonly<Record<string, string>>;
  /** The execution-environment worker. */
  readonly worker: string;
  readonly dispose: () => Promise<void>;
}

const WORKER_ENTRY = fileURLToPath(new URL('./lambda-runtime/worker.ts', import.meta.url));

/**
 * Bundles handlers with the same esbuild options the stack's NodejsFunction uses (lib/bundling.ts),
 * into a private temporary folder, so the local runtime runs what would be deployed.
 */
export async function bundleHandlers(
  names: readonly string[],
  options: { readonly outdir?: string } = {},
): Promise<Bundles> {
  const outdir = options.outdir ?? (await mkdtemp(join(tmpdir(), 'delivery-semantics-bundles-')));
  try {
    await Promise.all([
      build({
        entryPoints: Object.fromEntries(names.map((name) => [name, handlerEntry(name)])),
        outdir,
        bundle: true,
        platform: BUNDLING.platform,
        format: BUNDLING.format,
        target: BUNDLING.target,
        minify: BUNDLING.minify,
        sourcemap: BUNDLING.sourcemap,
        mainFields: [...BUNDLING.mainFields],
        banner: { js: BUNDLING.banner },
        external: [...BUNDLING.externalModules],
        outExtension: { '.js': '.mjs' },
        logLevel: 'error',
      }),
      build({
        entryPoints: { worker: WORKER_ENTRY },
        outdir,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        outExtension: { '.js': '.mjs' },
        logLevel: 'error',
      }),
    ]);
  } catch (error) {
    await rm(outdir, { recursive: true, force: true });
    throw error;
  }
  if (options.outdir !== undefined) {
    return { ...paths(outdir, names), dispose: async () => undefined };
  }
  // A temporary folder is removed however the process ends (a forced exit included).
  const removeOnExit = () => rmSync(outdir, { recursive: true, force: true });
  process.once('exit', removeOnExit);
  return {
    ...paths(outdir, names),
    dispose: async () => {
      process.removeListener('exit', removeOnExit);
      await rm(outdir, { recursive: true, force: true });
    },
  };
}

function paths(outdir: string, names: readonly string[]) {
  return {
    handlers: Object.fromEntries(names.map((name) => [name, join(outdir, `${name}.mjs`)])),
    worker: join(outdir, 'worker.mjs'),
  };
}

/**
 * `npm run explore`: every crash point of each mode's consumer (harness/explore/). With --core DIR
 * the cores are resolved from DIR before any of them is loaded (harness/explore/core-hooks.mjs).
 */
import { existsSync, statSync } from 'node:fs';
import { register } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ParsedOptions } from '../options/parse.js';
import { runEntryPoint } from '../options/run.js';
import { UsageError } from '../options/usage-error.js';

const CORE_DIR = new URL('../../functions/core/', import.meta.url);

async function main(options: ParsedOptions<'explore'>) {
  const core = options.values.core;
  if (core !== undefined) useCores(core);
  const { explore } = await import('../explore/command.js');
  return explore(options);
}

/** Resolves functions/core/* from `dir` from now on. */
function useCores(dir: string): void {
  const path = resolve(dir);
  if (!existsSync(path) || !statSync(path).isDirectory()) {
    throw new UsageError(`--core ${dir}: no such directory (give a copy of functions/core/, every file)`);
  }
  for (const file of ['effectively-once.ts', 'batch.ts', 'errors.ts']) {
    if (!existsSync(resolve(path, file))) {
      throw new UsageError(
        `--core ${dir} has no ${file}: give a copy of the whole of functions/core/, changed`,
      );
    }
  }
  register(new URL('../explore/core-hooks.mjs', import.meta.url), {
    data: {
      from: CORE_DIR.href,
      to: pathToFileURL(`${path}/`).href,
      anchor: new URL('effectively-once.ts', CORE_DIR).href,
    },
  });
}

runEntryPoint('explore', main, { explained: [UsageError] });

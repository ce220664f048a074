/**
 * `npm run explore`: every crash point of each mode's consumer (harness/explore/). With --core DIR
 * the cores are resolved from DIR before any of them is loaded (harness/explore/core-hooks.mjs).
 */
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { register } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../lib/bundling.js';
import type { ParsedOptions } from '../options/parse.js';
import { runEntryPoint } from '../options/run.js';
import { UsageError } from '../options/usage-error.js';

const CORE_DIR = new URL('../../packages/consumer-cores/src/', import.meta.url);

async function main(options: ParsedOptions<'explore'>) {
  const core = options.values.core;
  if (core !== undefined) useCores(core);
  const { explore } = await import('../explore/command.js');
  return explore(options);
}

/**
 * Resolves the cores (packages/consumer-cores/src/*) from a copy of `dir` from now on. The copy is made inside the project
 * (.explore/, removed at exit), so the team's files import this project's packages and are ES
 * modules wherever `dir` is.
 */
function useCores(dir: string): void {
  const path = resolve(dir);
  if (!existsSync(path) || !statSync(path).isDirectory()) {
    throw new UsageError(
      `--core ${dir}: no such directory (give a copy of packages/consumer-cores/src/, every file)`,
    );
  }
  const missing = readdirSync(CORE_DIR)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .filter((file) => !existsSync(resolve(path, file)));
  if (missing.length > 0) {
    throw new UsageError(
      `--core ${dir} has no ${missing.join(', ')}: give a copy of the whole of packages/consumer-cores/src/, changed (the lab imports every core by its file name)`,
    );
  }
  const copy = join(PROJECT_ROOT, '.explore', `core-${process.pid}`);
  rmSync(copy, { recursive: true, force: true });
  cpSync(path, copy, { recursive: true });
  process.on('exit', () => rmSync(copy, { recursive: true, force: true }));
  register(new URL('../explore/core-hooks.mjs', import.meta.url), {
    data: {
      from: CORE_DIR.href,
      to: pathToFileURL(`${copy}/`).href,
      harness: new URL('../', import.meta.url).href,
    },
  });
}

runEntryPoint('explore', main, { explained: [UsageError] });

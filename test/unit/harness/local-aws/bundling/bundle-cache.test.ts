import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachedBuild } from '../../../../../harness/local-aws/bundling/bundle-cache.js';

describe('bundles cached by content', () => {
  let project: string;
  let cache: string;
  let builds: BuildOptions[];

  /** Writes a source file dated in the past, as an edit made before the build. */
  function write(name: string, text: string): void {
    const path = join(project, name);
    writeFileSync(path, text);
    const past = new Date(Date.now() - 60_000);
    utimesSync(path, past, past);
  }
  const output = (entry: string) => readFileSync(join(entry, 'handler.js'), 'utf8');

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'bundle-cache-project-'));
    cache = mkdtempSync(join(tmpdir(), 'bundle-cache-root-'));
    write('handler.ts', "import { amount } from './amount.js';\nexport const handler = () => amount;\n");
    write('amount.ts', 'export const amount: number = 41;\n');
    builds = [
      {
        absWorkingDir: project,
        entryPoints: { handler: 'handler.ts' },
        bundle: true,
        platform: 'node',
        format: 'esm',
        logLevel: 'silent',
      },
    ];
  });
  afterEach(() => {
    rmSync(project, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('builds once, then hands back the same entry while no input changed', async () => {
    const first = await cachedBuild(builds, cache);
    expect(output(first)).toContain('41');
    expect(await cachedBuild(builds, cache)).toBe(first);
    expect(readdirSync(cache)).toHaveLength(1);
  });

  it('rebuilds when an imported file changes, and finds the first entry again when it is changed back', async () => {
    const first = await cachedBuild(builds, cache);
    write('amount.ts', 'export const amount: number = 42;\n');
    const second = await cachedBuild(builds, cache);
    expect(second).not.toBe(first);
    expect(output(second)).toContain('42');
    write('amount.ts', 'export const amount: number = 41;\n');
    expect(await cachedBuild(builds, cache)).toBe(first);
  });

  it('keys on the build options too', async () => {
    const plain = await cachedBuild(builds, cache);
    const minified = await cachedBuild([{ ...builds[0], minify: true }], cache);
    expect(minified).not.toBe(plain);
  });

  it('keys on tsconfig.json, which esbuild reads without listing it as an input', async () => {
    const before = await cachedBuild(builds, cache);
    write('tsconfig.json', '{ "compilerOptions": { "target": "es2020" } }\n');
    expect(await cachedBuild(builds, cache)).not.toBe(before);
  });

  it('removes the staging folder of a build whose process is gone', async () => {
    await cachedBuild(builds, cache);
    const [entry] = readdirSync(cache);
    const key = entry?.replace(/-[0-9a-f]{16}$/, '');
    const abandoned = join(cache, `${key}.staging-999999999-abcdef`);
    mkdirSync(abandoned);
    await cachedBuild(builds, cache);
    expect(readdirSync(cache)).not.toContain(`${key}.staging-999999999-abcdef`);
  });
});

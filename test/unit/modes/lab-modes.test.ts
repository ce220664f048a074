import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MODE_NAMES } from '../../../contract/topology.js';
import { LAB_MODES } from '../../../modes/lab-modes.js';
import { handlerEntry, PROJECT_ROOT, SOURCE_CONDITION } from '../../../stack/bundling.js';

const run = promisify(execFile);

describe('the registry of lab modes', () => {
  it.each(MODE_NAMES)(
    "loads %s's definition, whose handler is the one its Lambda entry exports",
    async (mode) => {
      const definition = (await LAB_MODES[mode].load()) as {
        readonly mode: string;
        readonly handler?: unknown;
      };
      expect(definition.mode).toBe(mode);
      const entry = (await import(handlerEntry(mode))) as { readonly handler?: unknown };
      expect(entry.handler).toBeTypeOf('function');
      // The stack and the local runtime bundle the entry: it must be the registry's mode, not a copy.
      expect(entry.handler).toBe(definition.handler);
    },
  );

  it('imports every mode with no environment at all: what is missing fails the invocations, not the import', async () => {
    const script = [
      "const { LAB_MODES } = await import('./modes/lab-modes.ts');",
      'const modes = await Promise.all(Object.values(LAB_MODES).map((entry) => entry.load()));',
      'console.log(modes.map((definition) => definition.mode).join(","));',
    ].join('\n');
    const { stdout } = await run(
      `${PROJECT_ROOT}node_modules/.bin/tsx`,
      [`--conditions=${SOURCE_CONDITION}`, '--input-type=module', '-e', script],
      { cwd: PROJECT_ROOT, env: { PATH: process.env.PATH ?? '' } },
    );
    expect(stdout.trim().split(',')).toEqual([...MODE_NAMES]);
  }, 60_000);

  it('says what is missing when a handler is first invoked without its settings', async () => {
    const script = [
      "const { handler } = await import('./modes/fifo-versioned.ts');",
      'try { await handler({ Records: [] }, { awsRequestId: "r" }); } catch (error) { console.log(error.message); }',
    ].join('\n');
    const { stdout } = await run(
      `${PROJECT_ROOT}node_modules/.bin/tsx`,
      [`--conditions=${SOURCE_CONDITION}`, '--input-type=module', '-e', script],
      { cwd: PROJECT_ROOT, env: { PATH: process.env.PATH ?? '' } },
    );
    expect(stdout).toMatch(/TABLE_NAME/);
  }, 60_000);
});

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { MODE_NAMES } from '../../contract/topology.js';
import { handlerEntry, PROJECT_ROOT } from '../../stack/bundling.js';

const run = promisify(execFile);
const outdir = mkdtempSync(join(tmpdir(), 'cdk-synth-'));

describe('cdk synth (the CLI, as a user runs it, offline)', () => {
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  // The CLI's full synth of the default stack, every handler bundled with local esbuild and cdk-nag
  // run, is test/integration/assembly.test.ts's: it deploys what it synthesized (one synth, not two).

  it('refuses a wrong -c value in one line that says what to pass, with no stack trace', async () => {
    const failed = await run('npx', ['cdk', 'synth', '--quiet', '-c', 'modes=exactly-once'], {
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('error: context modes names exactly-once, which the topology lacks');
    expect(failed?.stderr).not.toMatch(/\n\s+at /);
  }, 90_000);

  it("refuses pollers out of aws-cdk-lib's ranges in one line naming the context, with no stack trace", async () => {
    // The app as the CLI runs it (cdk.json's "app"), given the context the way the CLI passes it.
    const failed = await run(join(PROJECT_ROOT, 'node_modules/.bin/tsx'), ['stack/app.ts'], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ provisionedPollers: '10:2' }),
        CDK_OUTDIR: mkdtempSync(join(outdir, 'pollers-')),
      },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(
      'error: context provisionedPollers=10:2 is refused by aws-cdk-lib: Minimum provisioned pollers must be ' +
        'less than or equal to maximum provisioned pollers',
    );
    expect(failed?.stderr).not.toMatch(/\n\s+at /);
  }, 90_000);

  it('has one handler file per mode of the topology', () => {
    for (const mode of [...MODE_NAMES, 'verifier']) expect(existsSync(handlerEntry(mode))).toBe(true);
  });
});

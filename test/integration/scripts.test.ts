import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { runNpmScript } from '../support/cli.js';

const run = promisify(execFile);

/**
 * Every command a user can run is run by the suite: each script in package.json names the test
 * that runs it (or, for the few that need what this machine lacks, why none can). A script added
 * without a test fails here; the small runs below are the smoke tests no other file gives.
 */
const RUN_BY: Record<string, string> = {
  postinstall: 'npm ci itself (.ci/run), before any test',
  build: 'npm test (its type-check) and this file (its bundling step)',
  typecheck: 'npm test',
  lint: 'npm test',
  format: 'npm test (lint checks the formatting it writes)',
  test: '.ci/run',
  'test:fast': 'npm test runs the same projects',
  'test:unit': 'npm test runs the same project',
  'test:infra': 'npm test runs the same project',
  'test:component': 'npm test runs the same project',
  'test:runs': 'npm test runs the same project',
  'test:soak':
    'by hand before resolving a change to faults, the runtime, the verifier, the cores or the bench (docs/testing.md); not CI',
  'test:node24': '.ci/run',
  synth: 'test/infra/synth.test.ts (cdk synth --quiet through the CLI)',
  experiment: 'test/integration/cli.test.ts (experiment.test.ts runs its harness in process)',
  redrive: 'test/integration/cli-options.test.ts (a missing run, a missing stack)',
  assembly:
    'test/integration/assembly-all.test.ts (soak: synth, deploy, the deployed driver in its own process; npm test runs the same parts in process)',
  bench:
    'test/integration/script-runs.test.ts (one mode at its smallest), test/integration/bench.test.ts (--quick, test:soak)',
  'bench:verifier': 'this file',
  'bench:default-run': 'test/integration/script-runs.test.ts',
  'localstack:up': 'none: needs a Docker engine, which this machine lacks (localstack/README.md)',
  'localstack:down': 'none: needs a Docker engine',
  'deploy:local': 'none: needs LocalStack running',
  'destroy:local': 'none: needs LocalStack running',
  proofs: 'test/integration/proofs.test.ts',
  explore: 'test/integration/explore.test.ts',
  sweep: 'test/integration/script-runs.test.ts',
  'docs:options':
    'test/integration/cli-options.test.ts (a bad option; options/docs.test.ts checks its output)',
  'docs:figures':
    'test/integration/cli-options.test.ts (an unknown figure; the rendering is checked in process by the docs-figures unit test)',
};

describe('every package.json script', () => {
  it('is run by a named test, or says why it cannot be', () => {
    const { scripts } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(Object.keys(scripts).sort()).toEqual(Object.keys(RUN_BY).sort());
    for (const [script, where] of Object.entries(RUN_BY)) {
      for (const [file] of where.matchAll(/test\/\S+\.test\.ts/g)) {
        if (file === 'test/integration/scripts.test.ts') continue;
        expect(existsSync(join(PROJECT_ROOT, file)), file).toBe(true);
        // The file it names runs it: through npm, or the script's own command (`tsx <file>`, `cdk
        // synth`). A renamed script or a moved test shows.
        const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
        const command = scripts[script] ?? '';
        const ways = [
          `runNpmScript('${script}'`,
          `['${script}',`,
          command.replace(/^tsx /, ''),
          ...(script === 'experiment' ? ['runCli('] : []),
          ...(script === 'synth' ? ["'cdk', 'synth', '--quiet'"] : []),
        ];
        expect(
          ways.some((way) => text.includes(way)),
          `${file} runs npm run ${script} (one of ${ways.join(' ')})`,
        ).toBe(true);
      }
    }
  });

  it('npm run bench:verifier -- --events 200: seeds, verifies and finds the counts it seeded', async () => {
    const result = await runNpmScript('bench:verifier', ['--events', '200']);

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/verifier over 200 events × \d+ modes .*peak RSS \d+ MB/);
  }, 120_000);

  it("npm run build's bundling step: every handler into dist/functions/ (its type-check is npm test's)", async () => {
    const result = await run(join(PROJECT_ROOT, 'node_modules/.bin/tsx'), ['harness/commands/build.ts'], {
      cwd: PROJECT_ROOT,
    });

    expect(result.stdout).toMatch(/dist\/functions\/verifier\.mjs/);
    for (const name of ['at-least-once', 'effectively-once', 'verifier']) {
      expect(existsSync(join(PROJECT_ROOT, 'dist/functions', `${name}.mjs`)), name).toBe(true);
    }
  }, 180_000);
});

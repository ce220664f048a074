import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, SOURCE_CONDITION } from '../../stack/bundling.js';

const run = promisify(execFile);

async function addLineAfter(file: string, line: string, added: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  expect(text).toContain(`${line}\n`);
  await writeFile(file, text.replace(`${line}\n`, `${line}\n${added}\n`));
}

/** A mode that exists only in this test's copy of the project. */
const MODE = 'throwaway-mode';

const ENTRY = `  '${MODE}': {
    ...CONSUMER_DEFAULTS,
    summary: 'credits like at-least-once; added by a test to show what a new mode takes',
    crashPoint: 'the event had been applied, the batch not yet acknowledged',
    crashStep: 'acknowledge',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    evidence: 'balance',
    promises: { noLoss: true, noDuplicates: false },
    proof: {
      counts: { crashes: 1, duplicated: 1, extraApplications: 1, lost: 0 },
      story: 'was applied, the process was killed, and the redelivery applied it again',
      expected: 'the crash to land after the credit and the redelivery to credit again',
    },
  },
`;

/**
 * "A new mode is one entry in contract/topology.ts, one handler file, and one line in each of the
 * two typed tables the compiler asks for" (docs/design.md, "Adding a mode"), and the component
 * layer's two (its fourth step), done for real on a
 * copy of the project: nothing else is edited, the copy type-checks, and
 * `npm run proofs` kills the new mode's consumer at its crash point over the emulators and proves
 * the entry's proof.
 */
describe('adding a mode', () => {
  let copy: string;

  beforeAll(async () => {
    copy = await mkdtemp(join(tmpdir(), 'new-mode-'));
    for (const dir of ['contract', 'modes', 'verifier', 'services', 'stack', 'harness']) {
      await cp(join(PROJECT_ROOT, dir), join(copy, dir), { recursive: true });
    }
    // .npmrc: its scripts resolve the workspace packages to their sources, as here.
    for (const file of ['package.json', 'tsconfig.json', 'cdk.json', '.npmrc']) {
      await cp(join(PROJECT_ROOT, file), join(copy, file));
    }
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');

    const topologyFile = join(copy, 'contract/topology.ts');
    const topology = await readFile(topologyFile, 'utf8');
    const end = '} as const satisfies Record<string, ModeSettings>;';
    expect(topology).toContain(end);
    await writeFile(topologyFile, topology.replace(end, `${ENTRY}${end}`));

    const handler = await readFile(join(copy, 'modes/at-least-once.ts'), 'utf8');
    expect(handler).toContain("mode: 'at-least-once'");
    await writeFile(
      join(copy, `modes/${MODE}.ts`),
      handler.replace("mode: 'at-least-once'", `mode: '${MODE}'`),
    );
    // One line in each typed table the compiler asks for: the mode's needs (none), and its entry in
    // the registry (its loader, and how a harness feeds its needs).
    await addLineAfter(
      join(copy, 'modes/kit/lab-mode.ts'),
      "  'at-least-once': object;",
      `  '${MODE}': object;`,
    );
    await addLineAfter(
      join(copy, 'modes/lab-modes.ts'),
      "  'at-least-once': { load: async () => (await import('./at-least-once.js')).consumer, needs: none },",
      `  '${MODE}': { load: async () => (await import('./${MODE}.js')).consumer, needs: none },`,
    );
    // The component layer's two tables (docs/design.md's fourth step): the steps its core takes and
    // what its cells that are not exact show, at-least-once's, whose handler it copies.
    await mkdir(join(copy, 'test/integration'), { recursive: true });
    const coresFile = join(copy, 'test/integration/cores.test.ts');
    await cp(join(PROJECT_ROOT, 'test/integration/cores.test.ts'), coresFile);
    // Its DynamoDB Local, as the component project starts it (and nothing else of vitest.config.ts).
    for (const file of ['shared-dynamodb.ts', 'shared-dynamodb.setup.ts']) {
      await cp(join(PROJECT_ROOT, 'test/support', file), join(copy, 'test/support', file));
    }
    // The packages resolve to their sources, as in vitest.config.ts.
    const conditions = JSON.stringify([SOURCE_CONDITION, 'node', 'development|production']);
    await writeFile(
      join(copy, 'vitest.config.ts'),
      `export default { resolve: { conditions: ${conditions} }, ssr: { resolve: { conditions: ${conditions} } }, ` +
        `environments: { __vitest__: { resolve: { conditions: ${conditions} } } }, ` +
        "test: { globalSetup: ['test/support/shared-dynamodb.setup.ts'] } };\n",
    );
    await addLineAfter(
      coresFile,
      "  'at-least-once': ['UpdateItem', 'acknowledge'],",
      `  '${MODE}': ['UpdateItem', 'acknowledge'],`,
    );
    const cores = await readFile(coresFile, 'utf8');
    const notExact = /\n {2}'at-least-once': \{\n(?: {4}.*\n)+? {2}\},\n/.exec(cores)?.[0];
    if (notExact === undefined)
      throw new Error("cores.test.ts has no NOT_EXACT entry for 'at-least-once' to copy");
    await writeFile(
      coresFile,
      cores.replace(notExact, `${notExact}${notExact.replace("'at-least-once'", `'${MODE}'`).slice(1)}`),
    );
  });

  afterAll(async () => {
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  it('type-checks with one topology entry, one handler file and its line in each typed table', async () => {
    await expect(
      run(join(copy, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json', '--noEmit'], { cwd: copy }),
    ).resolves.toBeDefined();
  }, 120_000);

  it('gets its own cells in the component layer, and keeps its promise in each', async () => {
    // The copy's vitest.config.ts has the shared DynamoDB Local only: the one file, the new mode's test.
    const { stdout } = await run(
      join(copy, 'node_modules/.bin/vitest'),
      ['run', 'test/integration/cores.test.ts', '-t', `the ${MODE} core`],
      { cwd: copy, env: { ...process.env, NO_COLOR: '1', CI: 'true' } },
    );
    expect(stdout).toMatch(/Tests {2}1 passed/);
  }, 180_000);

  it('is proved by npm run proofs with a real crash at its crash point', async () => {
    const { stdout } = await run(
      join(copy, 'node_modules/.bin/tsx'),
      ['harness/commands/run-proofs.ts', '--modes', MODE],
      { cwd: copy, env: { ...process.env, NO_COLOR: '1' } },
    );
    expect(stdout).toMatch(new RegExp(`PROVED ${MODE}: \\S+ was applied, the process was killed`));
    expect(stdout).not.toMatch(/NOT PROVED/);
  }, 120_000);
});

import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExploredCell } from '../../harness/explore/explore.js';
import { cellText, type ExploreReport } from '../../harness/explore/report.js';
import { PROJECT_ROOT } from '../../lib/bundling.js';
import { runNpmScript } from '../support/cli.js';

/**
 * `npm run explore` as the README gives it: a copied core (`--core`), as a team would explore its
 * change, exact as copied and failing cells once its marker's condition is dropped; and one cell
 * replayed from its command, on the smallest scenario with an event before and after each step
 * (2 events, 1 account, one batch). What every core shows in every cell is the component layer's
 * (cores.test.ts).
 */
const SCENARIO = ['--events', '2', '--accounts', '1'];

async function explore(
  args: string[],
  scenario = SCENARIO,
): Promise<{ code: number | null; report: ExploreReport; stderr: string }> {
  const run = await runNpmScript('explore', [...scenario, '--json', ...args]);
  const json = run.stdout.slice(run.stdout.indexOf('{'));
  return { code: run.code, report: JSON.parse(json) as ExploreReport, stderr: run.stderr };
}

/** Each depth-1 cell as `fault@operation#event`: what the matrix shows in it (`!`: a broken promise). */
function shown(report: ExploreReport, mode: string): Record<string, string> {
  const exploration = report.modes.find((each) => each.mode === mode);
  if (exploration === undefined) throw new Error(`${mode} was not explored`);
  const steps = new Map(exploration.steps.map((step) => [step.key, step]));
  return Object.fromEntries(
    exploration.cells.map((cell: ExploredCell) => {
      const [fault] = cell.plan;
      const step = steps.get(fault?.step ?? '');
      return [`${fault?.fault}@${step?.operation}#${step?.event}`, cellText(cell)];
    }),
  );
}

describe('npm run explore', () => {
  const temporary: string[] = [];
  afterAll(async () => {
    for (const dir of temporary) await rm(dir, { recursive: true, force: true });
  });

  it('explores a copied core with --core: exact as copied, failing cells once the marker condition is dropped', async () => {
    const copy = await mkdtemp(join(tmpdir(), 'team-core-'));
    temporary.push(copy);
    await cp(join(PROJECT_ROOT, 'packages/consumer-cores/src'), copy, { recursive: true });

    // One event: the break shows at every step it has.
    const oneEvent = ['--events', '1', '--accounts', '1'];
    const asCopied = await explore(['--modes', 'effectively-once', '--core', copy], oneEvent);
    expect(asCopied.report.core).toBe(copy);
    expect(asCopied.report.broken).toBe(0);
    expect(asCopied.code).toBe(0);

    const file = join(copy, 'effectively-once.ts');
    const source = await readFile(file, 'utf8');
    const condition = "ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now',";
    expect(source).toContain(condition);
    // Always true, and every name and value still used (DynamoDB refuses unused ones).
    await writeFile(
      file,
      source.replace(
        condition,
        "ConditionExpression: 'attribute_not_exists(#pk) OR #dedupeUntil < :now OR attribute_exists(#pk)',",
      ),
    );
    const broken = await explore(['--modes', 'effectively-once', '--core', copy], oneEvent);

    const cells = shown(broken.report, 'effectively-once');
    // Whatever is redelivered after a write that was applied is applied again.
    expect(cells['killed-before@acknowledge#batch']).toBe('dup 1 !');
    expect(cells['lost-then-killed@TransactWriteItems#evt-0000000']).toBe('dup 1 !');
    expect(broken.report.broken).toBeGreaterThan(0);
    expect(broken.code).toBe(1);
  });

  it('replays one cell from its command, and prints its trace', async () => {
    const run = await runNpmScript('explore', [
      ...SCENARIO,
      '--modes',
      'marker-then-credit',
      '--cell',
      'killed-before@1:evt-0000001:UpdateItem:1:1',
    ]);

    expect(run.stdout).toContain('marker-then-credit: lost 1');
    expect(run.stdout).toMatch(
      /delivery 1 \(receive 1, killed\): PutItem evt-0000000 → UpdateItem evt-0000000 → PutItem evt-0000001 → UpdateItem evt-0000001\n/,
    );
    expect(run.stdout).toMatch(/delivery 2 \(receive 2, returned, acknowledged\)/);
    expect(run.code).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { runNpmScript } from '../support/cli.js';

/**
 * `npm run explore` as the README gives it: a team's scenario module (`--scenario`), its matrix and
 * its broken cells' replays; the option it replaced; and one lab cell replayed from its command,
 * on the smallest scenario with an event before and after each step (2 events, 1 account, one
 * batch). What every core shows in every cell is the component layer's (cores.test.ts), the API's
 * own cases explore-api.test.ts.
 */
const SCENARIO = ['--events', '2', '--accounts', '1'];

describe('npm run explore', () => {
  it('explores a team scenario with --scenario FILE: its matrix, its promise, the broken cells and their replays', async () => {
    const run = await runNpmScript('explore', [
      '--scenario',
      'test/support/orders.scenario.ts',
      '--parallel',
      '8',
    ]);

    expect(run.stdout).toContain('promise: each order reserved exactly once');
    expect(run.stdout).toMatch(
      /work-first: 16 cells \(10 single, 6 on a retry\) in [\d.]+ s, the invariant broken in \d+ cells/,
    );
    expect(run.stdout).toMatch(
      /killed-before@1:batch:acknowledge:1:1: order-1 applied 2 times; order-2 applied 2 times/,
    );
    expect(run.stdout).toContain(
      'replay: npm run explore -- --scenario test/support/orders.scenario.ts --cell killed-before@1:batch:acknowledge:1:1',
    );
    expect(run.stdout).toContain('ack not applied: the mapping');
    expect(run.code).toBe(1);
  });

  it('says what replaced --core', async () => {
    const run = await runNpmScript('explore', ['--core', 'somewhere']);
    expect(run.stderr).toMatch(/Unknown option '--core': replaced by the explorer's API.*--scenario FILE/);
    expect(run.code).toBe(2);
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

  it('replays one interleaving schedule from its name, its steps in two columns: check-then-act applies the event twice with no fault', async () => {
    const run = await runNpmScript('explore', [
      ...SCENARIO,
      '--modes',
      'credit-then-marker',
      '--schedule',
      'two-deliveries:A,A,B,B,B,B,B,A',
    ]);

    expect(run.stdout).toContain('credit-then-marker: two-deliveries:A,A,B,B,B,B,B,A: dup 1');
    // A credits, then B receives the event again, finds no marker, and credits too.
    expect(run.stdout).toMatch(
      /A: first delivery\s+B: second delivery\n\s+GetItem evt-0000000\n\s+UpdateItem evt-0000000\n\s+receive \(its second delivery\)\n\s+GetItem evt-0000000\n\s+UpdateItem evt-0000000\n/,
    );
    expect(run.code).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { MODE_NAMES, type Mode } from '../../contract/topology.js';
import { REDRIVE_PROOF_MODES } from '../../harness/studies/proofs/proofs.js';
import { runNpmScript } from '../support/cli.js';

// Exactly as the README says: through npm.
const proofs = (args: string[]) => runNpmScript('proofs', args);

/**
 * Every verdict `npm run proofs` prints, in its order: each mode's, each redrive proof's, and the
 * producer's two (with effectively-once). In `npm test` the proofs of two modes run, one that
 * breaks and the one that holds, with their redrive and producer proofs: each kind of verdict once,
 * with a real SIGKILL. Every mode's crash point is proven in the component layer (cores.test.ts);
 * under `npm run test:soak` this file proves every mode.
 */
const VERDICTS: readonly RegExp[] = [
  /^PROVED at-most-once: evt-000000 was deleted, .* never applied \(1 produced, .*0 applied/,
  /^PROVED at-least-once: .*applied a second time \(.*1 applied \(2 applications\)/,
  /^PROVED effectively-once: .*skipped \(.*1 applied \(1 applications\), 0 lost, 1 skipped/,
  /^PROVED powertools-idempotency: .*credited it again \(.*2 applications/,
  /^PROVED powertools-message-id: .*credited it again \(.*2 applications/,
  /^PROVED entry-upsert: .*wrote the same entry again.*\(.*1 applied \(1 applications\), 0 lost, 1 skipped/,
  /^PROVED state-upsert: .*found its own version stored and wrote nothing \(.*1 applied \(1 applications\), 0 lost, 1 skipped/,
  /^PROVED fifo-versioned: .*found its own seq as the stored version and wrote nothing \(.*1 applied \(1 applications\), 0 lost, 1 skipped/,
  // A side effect: charged twice without a key, once with one; recorded once either way.
  /^PROVED charge-no-key: .*charged the card again: recorded once, charged twice \(.*1 applied \(1 applications\), 0 lost, 0 skipped as duplicates, 2 charge\(s\) at the provider\)$/,
  /^PROVED charge-with-key: .*replayed the first charge, recorded once, charged once \(.*1 applied \(1 applications\), 0 lost, 0 skipped as duplicates, 1 charge\(s\) at the provider\)$/,
  // The teaching modes: two writes, and the order decides which way they break.
  /^PROVED marker-then-credit: .*found the marker and skipped it: never credited \(.*0 applied \(0 applications\), 1 lost/,
  /^PROVED credit-then-marker: .*found no marker and credited it again \(.*1 applied \(2 applications\), 0 lost/,
  // The redrive proof: applied, killed at the last allowed receive, dead-lettered, redriven.
  /^PROVED at-least-once after a redrive: evt-000000 was applied, .*dead-lettered it, and its redriven copy .*applied a second time \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(2 applications\), 0 lost, 0 skipped as duplicates, 0 in the DLQ\)$/,
  /^PROVED effectively-once after a redrive: .*found the marker and was skipped \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(1 applications\), 0 lost, 1 skipped as duplicates, 0 in the DLQ\)$/,
  /^PROVED powertools-message-id after a redrive: .*a message id Powertools had never seen, was credited again \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(2 applications\), 0 lost, 0 skipped as duplicates, 0 in the DLQ\)$/,
  /^PROVED state-upsert after a redrive: .*its redriven copy found its own version stored and wrote nothing \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(1 applications\), 0 lost, 1 skipped as duplicates, 0 in the DLQ\)$/,
  // On a FIFO queue: the redriven copy keeps its group and gets a new deduplication id.
  /^PROVED fifo-versioned after a redrive: .*its redriven copy found its seq already in the stored version and wrote nothing \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(1 applications\), 0 lost, 1 skipped as duplicates, 0 in the DLQ\)$/,
  // The producing side: the dual write loses a committed event, the outbox sends it twice.
  /^PROVED dual-write: evt-000000 was committed by the producer, which was killed before it sent the event.*never sent 1.*effectively-once: 1 produced, 0 deliveries, .*0 applied \(0 applications\), 1 lost/,
  /^PROVED outbox: evt-000000 was committed with its outbox item .*relay kills 1; effectively-once: 1 produced, 2 deliveries, 0 crash\(es\), 1 applied \(1 applications\), 0 lost, 1 skipped as duplicates\)$/,
];

/** The verdict's subject: `at-most-once`, `effectively-once after a redrive`, `outbox`. */
function subjectOf(pattern: RegExp): string {
  return /^\^PROVED ([a-z-]+(?: after a redrive)?):/.exec(pattern.source)?.[1] ?? '';
}

const SOAK = process.env.SOAK === '1';
const MODES_PROVED: readonly Mode[] = SOAK ? MODE_NAMES : ['at-most-once', 'effectively-once'];

describe('npm run proofs (single-message demonstrations, real SIGKILLs, counted from the ledger)', () => {
  it(`proves ${SOAK ? 'every mode' : MODES_PROVED.join(' and ')} at its crash point, with their redrive and producer proofs, and exits 0`, async () => {
    const { code, stdout, stderr } = await proofs(SOAK ? [] : ['--modes', MODES_PROVED.join(',')]);
    expect(code, stderr).toBe(0);
    const subjects = new Set<string>([
      ...MODES_PROVED,
      ...REDRIVE_PROOF_MODES.filter((mode) => MODES_PROVED.includes(mode)).map(
        (mode) => `${mode} after a redrive`,
      ),
      ...(MODES_PROVED.includes('effectively-once') ? ['dual-write', 'outbox'] : []),
    ]);
    const expected = VERDICTS.filter((pattern) => subjects.has(subjectOf(pattern)));
    expect(expected).toHaveLength(subjects.size);
    expect(stdout.trim().split('\n')).toEqual(expected.map((pattern) => expect.stringMatching(pattern)));
  });

  it('says NOT PROVED and exits 1 when the chosen crash never lands', async () => {
    const { code, stdout } = await proofs([
      '--crash-at',
      'evt-000009@1',
      '--modes',
      'at-most-once,at-least-once',
    ]);
    expect(code).toBe(1);
    expect(stdout.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^NOT PROVED at-most-once: expected the crash to land after the delete.*0 crash\(es\)/,
      ),
      expect.stringMatching(/^NOT PROVED at-least-once: expected the crash to land after the credit/),
      // Never killed, so never dead-lettered: nothing to redrive.
      expect.stringMatching(
        /^NOT PROVED at-least-once after a redrive: expected .*0 dead-lettered although applied, 0 redriven/,
      ),
    ]);
  });

  it('refuses a malformed crash target with exit 2', async () => {
    const { code, stderr } = await proofs(['--crash-at', 'evt-000000']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--crash-at must be EVENT@RECEIVE, like evt-000000@1, got "evt-000000"/);
  });
});

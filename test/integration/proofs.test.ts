import { describe, expect, it } from 'vitest';
import { runNpmScript } from '../support/cli.js';

// Exactly as the README says: through npm.
const proofs = (args: string[]) => runNpmScript('proofs', args);

describe('npm run proofs (single-message demonstrations, real SIGKILLs, counted from the ledger)', () => {
  it('proves each mode at its crash point and exits 0', async () => {
    const { code, stdout, stderr } = await proofs([]);
    expect(code, stderr).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        /^PROVED at-most-once: evt-000000 was deleted, .* never applied \(1 produced, .*0 applied/,
      ),
      expect.stringMatching(
        /^PROVED at-least-once: .*applied a second time \(.*1 applied \(2 applications\)/,
      ),
      expect.stringMatching(
        /^PROVED effectively-once: .*skipped \(.*1 applied \(1 applications\), 0 lost, 1 skipped/,
      ),
      expect.stringMatching(/^PROVED powertools-idempotency: .*credited it again \(.*2 applications/),
      expect.stringMatching(/^PROVED powertools-message-id: .*credited it again \(.*2 applications/),
      expect.stringMatching(
        /^PROVED entry-upsert: .*wrote the same entry again.*\(.*1 applied \(1 applications\), 0 lost, 1 skipped/,
      ),
      expect.stringMatching(
        /^PROVED state-upsert: .*found its own version stored and wrote nothing \(.*1 applied \(1 applications\), 0 lost, 1 skipped/,
      ),
      expect.stringMatching(
        /^PROVED fifo-versioned: .*found its own seq as the stored version and wrote nothing \(.*1 applied \(1 applications\), 0 lost, 1 skipped/,
      ),
      // A side effect: charged twice without a key, once with one; recorded once either way.
      expect.stringMatching(
        /^PROVED charge-no-key: .*charged the card again: recorded once, charged twice \(.*1 applied \(1 applications\), 0 lost, 0 skipped as duplicates, 2 charge\(s\) at the provider\)$/,
      ),
      expect.stringMatching(
        /^PROVED charge-with-key: .*replayed the first charge, recorded once, charged once \(.*1 applied \(1 applications\), 0 lost, 0 skipped as duplicates, 1 charge\(s\) at the provider\)$/,
      ),
      // The teaching modes: two writes, and the order decides which way they break.
      expect.stringMatching(
        /^PROVED marker-then-credit: .*found the marker and skipped it: never credited \(.*0 applied \(0 applications\), 1 lost/,
      ),
      expect.stringMatching(
        /^PROVED credit-then-marker: .*found no marker and credited it again \(.*1 applied \(2 applications\), 0 lost/,
      ),
      // The redrive proof: applied, killed at the last allowed receive, dead-lettered, redriven.
      expect.stringMatching(
        /^PROVED at-least-once after a redrive: evt-000000 was applied, .*dead-lettered it, and its redriven copy .*applied a second time \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(2 applications\), 0 lost, 0 skipped as duplicates, 0 in the DLQ\)$/,
      ),
      expect.stringMatching(
        /^PROVED effectively-once after a redrive: .*found the marker and was skipped \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(1 applications\), 0 lost, 1 skipped as duplicates, 0 in the DLQ\)$/,
      ),
      expect.stringMatching(
        /^PROVED powertools-message-id after a redrive: .*a message id Powertools had never seen, was credited again \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(2 applications\), 0 lost, 0 skipped as duplicates, 0 in the DLQ\)$/,
      ),
      expect.stringMatching(
        /^PROVED state-upsert after a redrive: .*its redriven copy found its own version stored and wrote nothing \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(1 applications\), 0 lost, 1 skipped as duplicates, 0 in the DLQ\)$/,
      ),
      // On a FIFO queue: the redriven copy keeps its group and gets a new deduplication id.
      expect.stringMatching(
        /^PROVED fifo-versioned after a redrive: .*its redriven copy found its seq already in the stored version and wrote nothing \(before the redrive: 1 applied, 1 dead-lettered although applied, 1 redriven; after: 1 produced, 2 deliveries, 1 crash\(es\), 1 applied \(1 applications\), 0 lost, 1 skipped as duplicates, 0 in the DLQ\)$/,
      ),
      // The producing side: the dual write loses a committed event, the outbox sends it twice.
      expect.stringMatching(
        /^PROVED dual-write: evt-000000 was committed by the producer, which was killed before it sent the event.*never sent 1.*effectively-once: 1 produced, 0 deliveries, .*0 applied \(0 applications\), 1 lost/,
      ),
      expect.stringMatching(
        /^PROVED outbox: evt-000000 was committed with its outbox item .*relay kills 1; effectively-once: 1 produced, 2 deliveries, 0 crash\(es\), 1 applied \(1 applications\), 0 lost, 1 skipped as duplicates\)$/,
      ),
    ]);
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

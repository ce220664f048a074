import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedEnvironment } from '../../harness/environments/embedded.js';
import { experimentConfig, replayCommand, runEmbedded } from '../support/embedded-run.js';

const MODE = 'powertools-idempotency';

describe('powertools-idempotency, embedded (the real bundle: BatchProcessor + makeIdempotent over DynamoDB Local)', () => {
  let env: EmbeddedEnvironment | undefined;

  afterEach(async () => {
    await env?.stop();
    env = undefined;
  });

  it('without crashes: every event applied exactly once', async () => {
    const cfg = experimentConfig({ modes: [MODE], messages: 100, crashRate: 0, seed: 'pti-exact' });
    const run = await runEmbedded(cfg, (started) => {
      env = started;
    });
    const outcome = run.report.modes[MODE];

    expect(outcome, replayCommand(cfg)).toMatchObject({
      produced: 100,
      deliveries: 100,
      appliedOnce: 100,
      duplicated: 0,
      extraApplications: 0,
      lost: 0,
      deadLettered: 0,
      unexpected: 0,
      driftCents: 0,
      consistent: true,
      crashes: 0,
    });
  });

  it('with crashes: duplicates, never losses — a crash after the credit leaves INPROGRESS, and it has expired when SQS redelivers', async () => {
    // Seed and rate chosen so that crashes are drawn (8 with this seed when written).
    const cfg = experimentConfig({ modes: [MODE], messages: 200, crashRate: 0.05, seed: 'pt-crash' });
    const run = await runEmbedded(cfg, (started) => {
      env = started;
    });
    const outcome = run.report.modes[MODE];
    if (!outcome) throw new Error(`no outcome for ${MODE}`);
    const replay = replayCommand(cfg);

    // Why duplicates: the crash point is inside the idempotent function, after the credit's
    // transaction and before Powertools' COMPLETED update. The INPROGRESS record carries an
    // in-progress expiry of (start of the record's work + the invocation's remaining time), at most
    // the local function timeout (8 s) after the invocation started. SQS hands the message back only
    // after the visibility timeout (10 s) from the receive, which came before the invocation: by
    // then the expiry has passed, Powertools' conditional PutItem takes the record over, and the
    // credit runs again. (A redelivery before the expiry would get IdempotencyAlreadyInProgressError,
    // fail, and come back after another visibility timeout: later, not never.)
    expect(outcome.crashes, replay).toBeGreaterThan(0);
    expect(outcome.duplicated, replay).toBeGreaterThan(0);
    // One INPROGRESS record per crash, each re-applied once after it expired — and one per
    // invocation the local runtime killed at its timeout, if a loaded machine made one that slow
    // (a timeout leaves INPROGRESS exactly as a crash does).
    const timeouts = outcome.runtime?.timeouts ?? 0;
    expect(outcome.extraApplications, replay).toBeGreaterThanOrEqual(outcome.crashes);
    expect(outcome.extraApplications, replay).toBeLessThanOrEqual(outcome.crashes + timeouts);
    // Records the crashed invocation had already COMPLETED were skipped on their redelivery.
    expect(outcome.suppressedDuplicates, replay).toBeGreaterThan(0);
    expect(outcome, replay).toMatchObject({
      produced: 200,
      lost: 0,
      deadLettered: 0,
      unexpected: 0,
      consistent: true,
    });
    expect(outcome.appliedOnce + outcome.duplicated, replay).toBe(200);
    expect(outcome.driftCents, replay).toBeGreaterThan(0);
    expect(outcome.crashes, replay).toBe(outcome.runtime?.crashes);
  });

  it('the key, side by side: a producer re-send (same event id, another message id) is applied once by powertools-idempotency, twice by powertools-message-id', async () => {
    const BY_MESSAGE_ID = 'powertools-message-id';
    const cfg = experimentConfig({
      modes: [MODE, BY_MESSAGE_ID],
      messages: 30,
      crashRate: 0,
      seed: 'pt-key',
      faults: { producerDuplicateRate: 1 }, // every event sent twice, as two SQS messages
    });
    const run = await runEmbedded(cfg, (started) => {
      env = started;
    });
    const replay = replayCommand(cfg);
    const byEventId = run.report.modes[MODE];
    const byMessageId = run.report.modes[BY_MESSAGE_ID];
    if (!byEventId || !byMessageId) throw new Error('no outcome for a Powertools mode');

    for (const outcome of [byEventId, byMessageId]) {
      expect(outcome, replay).toMatchObject({
        produced: 30,
        producerDuplicates: 30,
        lost: 0,
        deadLettered: 0,
        unexpected: 0,
        consistent: true,
        crashes: 0,
      });
    }
    // An invocation killed at its timeout on a loaded machine leaves INPROGRESS as a crash does:
    // the only extra applications either mode may have beyond what its key lets through.
    const timeouts = (outcome: typeof byEventId) => outcome.runtime?.timeouts ?? 0;
    // Keyed on the event: the second message finds the first one's record and is skipped.
    expect(byEventId.appliedOnce, replay).toBeGreaterThanOrEqual(30 - timeouts(byEventId));
    expect(byEventId.extraApplications, replay).toBeLessThanOrEqual(timeouts(byEventId));
    // Keyed on the message: the second message has a key of its own and is credited again.
    expect(byMessageId.duplicated, replay).toBe(30);
    expect(byMessageId.extraApplications, replay).toBeGreaterThanOrEqual(30);
    expect(byMessageId.extraApplications, replay).toBeLessThanOrEqual(30 + timeouts(byMessageId));
    // Every event credited (at least) twice: the drift is (at least) the whole expected sum.
    expect(byMessageId.driftCents, replay).toBeGreaterThanOrEqual(byMessageId.expectedCents);
  });
});

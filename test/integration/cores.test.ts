import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODE_NAMES, MODES, type Mode, type ProofCount } from '../../contract/topology.js';
import {
  type RunningExploreEnvironment,
  startExploreEnvironment,
} from '../../harness/studies/explore/environment.js';
import { exploreMode, type ModeExploration, runLabCell } from '../../harness/studies/explore/explore.js';
import { cellText } from '../../harness/studies/explore/report.js';
import { sharedDynamoDb } from '../support/shared-dynamodb.js';

/**
 * The component layer: every mode's core, in this process, against DynamoDB Local (real
 * conditions, real transactions) and fauxqs, with no child process but DynamoDB Local's and the
 * payment provider's. One event, every cell of its depth-1 exploration (each step × each fault,
 * the redelivery at receiveCount + 1, the verifier's own join): the mode's promise in every cell,
 * what each cell that is not exact shows, and at its crash point (the topology's `crashStep`:
 * killed just before that step) the counts of its proof. Generated from contract/topology.ts, so a new mode brings its own cases.
 */
/**
 * Each core's steps for one event, as other systems see them: a request the explorer did not see
 * (the team's work inside Powertools, a charge attempt, at-most-once's delete) would be a cell
 * never explored. Typed per mode: a new mode states its trace here.
 */
const TRACES: { readonly [M in Mode]: readonly string[] } = {
  'at-most-once': ['DeleteMessageBatch', 'UpdateItem', 'acknowledge'],
  'at-least-once': ['UpdateItem', 'acknowledge'],
  'effectively-once': ['TransactWriteItems', 'acknowledge'],
  'powertools-idempotency': ['PutItem', 'TransactWriteItems', 'UpdateItem', 'acknowledge'],
  'powertools-message-id': ['PutItem', 'TransactWriteItems', 'UpdateItem', 'acknowledge'],
  'entry-upsert': ['UpdateItem', 'acknowledge'],
  'state-upsert': ['UpdateItem', 'acknowledge'],
  'fifo-versioned': ['UpdateItem', 'acknowledge'],
  'charge-no-key': ['Charge', 'TransactWriteItems', 'acknowledge'],
  'charge-with-key': ['Charge', 'TransactWriteItems', 'acknowledge'],
  'marker-then-credit': ['PutItem', 'UpdateItem', 'acknowledge'],
  'credit-then-marker': ['GetItem', 'UpdateItem', 'PutItem', 'acknowledge'],
};

/**
 * What each core shows in every cell that is not exact, one event, as `fault@operation`: the
 * matrix `npm run explore -- --events 1 --accounts 1` prints (its cell text), typed per mode. Every other cell is
 * exact. A change to a core that moves one of these (or adds one) fails here; a mode's promise
 * (contract/topology.ts) decides which of them break it.
 */
const NOT_EXACT: { readonly [M in Mode]: Readonly<Record<string, string>> } = {
  // Deleted first: from the delete's success to the credit, a kill loses the event.
  'at-most-once': {
    'lost-then-killed@DeleteMessageBatch': 'lost 1',
    'lost-error-seen@DeleteMessageBatch': 'lost 1',
    'killed-before@UpdateItem': 'lost 1',
    // Retry cells: the first attempt's response lost, then this on the client's retry.
    'response-lost@DeleteMessageBatch then lost-error-seen@DeleteMessageBatch#2': 'lost 1',
    'response-lost@DeleteMessageBatch then lost-then-killed@DeleteMessageBatch#2': 'lost 1',
  },
  // Credited first, with no evidence: whatever redelivers (or resends) the credit applies it again.
  'at-least-once': {
    'response-lost@UpdateItem': 'dup 1',
    'lost-then-killed@UpdateItem': 'dup 1',
    'lost-error-seen@UpdateItem': 'dup 1',
    'killed-before@acknowledge': 'dup 1',
    'ack-not-applied@acknowledge': 'dup 1',
    // Retry cells: the first attempt's response lost, then this on the client's retry.
    'response-lost@UpdateItem then lost-error-seen@UpdateItem#2': 'dup 1',
    'response-lost@UpdateItem then lost-then-killed@UpdateItem#2': 'dup 1',
    'response-lost@UpdateItem then response-lost@UpdateItem#2': 'dup 1',
  },
  'effectively-once': {},
  // The credit applied and its record not COMPLETED: INPROGRESS is deleted on the error, or has
  // expired by the redelivery. A lost response alone is exact: the SDK resends the same token.
  'powertools-idempotency': {
    'lost-then-killed@TransactWriteItems': 'dup 1',
    'lost-error-seen@TransactWriteItems': 'dup 1',
    'killed-before@UpdateItem': 'dup 1',
    // Retry cells: the first attempt's response lost, then this on the client's retry.
    'response-lost@TransactWriteItems then lost-error-seen@TransactWriteItems#2': 'dup 1',
    'response-lost@TransactWriteItems then lost-then-killed@TransactWriteItems#2': 'dup 1',
  },
  'powertools-message-id': {
    'lost-then-killed@TransactWriteItems': 'dup 1',
    'lost-error-seen@TransactWriteItems': 'dup 1',
    'killed-before@UpdateItem': 'dup 1',
    // Retry cells: the first attempt's response lost, then this on the client's retry.
    'response-lost@TransactWriteItems then lost-error-seen@TransactWriteItems#2': 'dup 1',
    'response-lost@TransactWriteItems then lost-then-killed@TransactWriteItems#2': 'dup 1',
  },
  'entry-upsert': {},
  'state-upsert': {},
  'fifo-versioned': {},
  // The ledger is exact in every cell; the card is charged again by whatever follows the charge.
  'charge-no-key': {
    'response-lost@Charge': 'charged twice 1',
    'lost-then-killed@Charge': 'charged twice 1',
    'lost-error-seen@Charge': 'charged twice 1',
    'killed-before@TransactWriteItems': 'charged twice 1',
    'lost-then-killed@TransactWriteItems': 'charged twice 1',
    'lost-error-seen@TransactWriteItems': 'charged twice 1',
    'killed-before@acknowledge': 'charged twice 1',
    'ack-not-applied@acknowledge': 'charged twice 1',
    // Retry cells: the first attempt's response lost, then this on the client's retry.
    'response-lost@Charge then lost-error-seen@Charge#2': 'charged twice 1',
    'response-lost@Charge then lost-then-killed@Charge#2': 'charged twice 1',
    'response-lost@Charge then response-lost@Charge#2': 'charged twice 1',
    'response-lost@TransactWriteItems then lost-error-seen@TransactWriteItems#2': 'charged twice 1',
    'response-lost@TransactWriteItems then lost-then-killed@TransactWriteItems#2': 'charged twice 1',
  },
  'charge-with-key': {},
  // From "marker applied" to "credit not yet sent" the event is lost; the credit's own lost
  // response is resent by the SDK (an UpdateItem has no token) and applied twice.
  'marker-then-credit': {
    'response-lost@PutItem': 'lost 1',
    'lost-then-killed@PutItem': 'lost 1',
    'lost-error-seen@PutItem': 'lost 1',
    'killed-before@UpdateItem': 'lost 1',
    'response-lost@UpdateItem': 'dup 1',
    // Retry cells: the first attempt's response lost, then this on the client's retry.
    'response-lost@PutItem then lost-error-seen@PutItem#2': 'lost 1',
    'response-lost@PutItem then lost-then-killed@PutItem#2': 'lost 1',
    'response-lost@PutItem then response-lost@PutItem#2': 'lost 1',
    'response-lost@UpdateItem then lost-error-seen@UpdateItem#2': 'dup 1',
    'response-lost@UpdateItem then lost-then-killed@UpdateItem#2': 'dup 1',
    'response-lost@UpdateItem then response-lost@UpdateItem#2': 'dup 1',
  },
  // From "credit applied" to "marker not yet sent" the redelivery finds no marker.
  'credit-then-marker': {
    'response-lost@UpdateItem': 'dup 1',
    'lost-then-killed@UpdateItem': 'dup 1',
    'lost-error-seen@UpdateItem': 'dup 1',
    'killed-before@PutItem': 'dup 1',
    // Retry cells: the first attempt's response lost, then this on the client's retry.
    'response-lost@UpdateItem then lost-error-seen@UpdateItem#2': 'dup 1',
    'response-lost@UpdateItem then lost-then-killed@UpdateItem#2': 'dup 1',
    'response-lost@UpdateItem then response-lost@UpdateItem#2': 'dup 1',
  },
};

let env: RunningExploreEnvironment;
beforeAll(async () => {
  env = await startExploreEnvironment(MODE_NAMES, await sharedDynamoDb('cores'));
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

/**
 * One event; a 1 s function timeout (the explorer's default is 2 s): every redelivery waits for it,
 * and one event's handler answers in milliseconds. A cell that still runs into it is run again.
 */
const ONE_EVENT = { events: 1, accounts: 1, resent: 0, functionTimeoutMs: 1_000 } as const;

/** A retry's step is not in the clean trace: `UpdateItem#2`, its operation and attempt. */
function retryOf(step: string): string {
  const [, operation, , attempt] = step.split(':');
  return `${operation}#${attempt}`;
}

/**
 * A cell that ran into the function timeout on a loaded machine is not the cell planned: it is run
 * again, one at a time, and only a second timeout fails (the cell's plan is the same: nothing
 * random is drawn again, so no failure is retried away). Each re-run is printed.
 */
async function rerunTimedOut(mode: Mode, exploration: ModeExploration): Promise<ModeExploration> {
  const timedOut = exploration.cells.filter((cell) => cell.timedOut);
  if (timedOut.length === 0) return exploration;
  console.info(
    `${mode}: ${timedOut.length} cell(s) ran into the function timeout, run again one at a time: ` +
      timedOut.map((cell) => cell.plan).join(', '),
  );
  const again = await exploreMode(env, mode, {
    scenario: ONE_EVENT,
    depth: 1,
    concurrency: 1,
    only: timedOut.map((cell) => cell.faults),
  });
  const rerun = new Map(again.cells.map((cell) => [cell.plan, cell]));
  return { ...exploration, cells: exploration.cells.map((cell) => rerun.get(cell.plan) ?? cell) };
}

// Side by side: a cell spends most of its time waiting out the function timeout before its
// redelivery, and each runs on its own queues under its own run id.
describe.concurrent.each(MODE_NAMES)('the %s core, one event, every step and fault', (mode) => {
  it(`keeps its promise in every cell, and shows its proof when killed before its ${MODES[mode].crashStep}`, async () => {
    const exploration = await rerunTimedOut(
      mode,
      await exploreMode(env, mode, { scenario: ONE_EVENT, depth: 1, concurrency: 8 }),
    );

    expect(exploration.steps.map((step) => step.operation)).toEqual(TRACES[mode]);
    expect(exploration.clean.exact, `${mode} without a fault`).toBe(true);
    // Timed out twice: not the cell planned, and it proves nothing either way.
    const timedOut = exploration.cells.filter((cell) => cell.timedOut).map((cell) => cell.plan);
    expect(timedOut, `${mode}: cells that timed out (a loaded machine)`).toEqual([]);
    const broken = exploration.cells.filter((cell) => !cell.promiseHeld).map((cell) => cell.plan);
    expect(broken).toEqual([]);
    const operations = new Map(exploration.steps.map((step) => [step.key, step.operation]));
    const notExact = Object.fromEntries(
      exploration.cells
        .filter((cell) => !cell.exact)
        .map((cell) => [
          cell.faults
            .map((fault) => `${fault.fault}@${operations.get(fault.step) ?? retryOf(fault.step)}`)
            .join(' then '),
          cellText(cell),
        ]),
    );
    expect(notExact).toEqual(NOT_EXACT[mode]);
    const step = exploration.steps.find(
      (each) => each.operation === MODES[mode].crashStep && each.attempt === 1 && each.occurrence === 1,
    );
    expect(step, `${mode}'s trace has its crash step`).toBeDefined();
    const designed = exploration.cells.find(
      (cell) => cell.faults[0]?.step === step?.key && cell.faults[0]?.fault === 'killed-before',
    );
    // The explorer kills without the lab's crash injector: no crash is counted.
    const { crashes: _, ...counts } = MODES[mode].proof.counts;
    const shown = Object.fromEntries(
      Object.keys(counts).map((count) => [count, designed?.outcome[count as Exclude<ProofCount, 'crashes'>]]),
    );
    expect(shown).toEqual(counts);
  }, 120_000);
});

/**
 * A producer's re-send: the same event id, another message id, in the same batch. What the key
 * decides, side by side: Powertools keyed on the event id applies it once, keyed on the message
 * id twice; the marker keyed on the event id once.
 */
// Side by side, like the modes above: each run has its own queues and run id.
describe('a producer re-send of each of two events', () => {
  const expected: readonly [Mode, { appliedOnce: number; duplicated: number }][] = [
    ['powertools-idempotency', { appliedOnce: 2, duplicated: 0 }],
    ['powertools-message-id', { appliedOnce: 0, duplicated: 2 }],
    ['effectively-once', { appliedOnce: 2, duplicated: 0 }],
  ];
  it.concurrent.each(expected)(
    '%s applies it as its key says: %o',
    async (mode, counts) => {
      const run = await runLabCell(env, mode, { events: 2, accounts: 1, resent: 2 }, []);
      expect(run.deliveries[0]?.events, 'both messages of each event in the one batch').toHaveLength(4);
      expect(run.outcome).toMatchObject({ ...counts, producerDuplicates: 2, lost: 0, consistent: true });
    },
    60_000,
  );
});

/**
 * The handler's loop and its partial batch response: two events of one account in one batch,
 * the process killed before the second event's first write. On the redelivery the first event,
 * done before the kill, is recognised and skipped (suppressedDuplicates), the second applied.
 */
describe('a batch of two, killed between its events', () => {
  const firstWrite: readonly [Mode, string][] = [
    ['effectively-once', 'TransactWriteItems'],
    ['powertools-idempotency', 'PutItem'],
  ];
  it.concurrent.each(firstWrite)(
    '%s skips on the redelivery the event it finished, and applies the other once',
    async (mode, operation) => {
      const scenario = { events: 2, accounts: 1, resent: 0 };
      const clean = await runLabCell(env, mode, scenario, []);
      const trace = clean.deliveries[0]?.trace ?? [];
      const events = [
        ...new Set(trace.map((step) => step.event).filter((event) => event.startsWith('evt-'))),
      ];
      expect(events, 'both events in the one batch').toHaveLength(2);
      const second = trace.find((step) => step.event === events[1] && step.operation === operation);
      if (!second)
        throw new Error(`${mode}: no ${operation} for ${events[1]} in ${trace.map((step) => step.key)}`);

      const run = await runLabCell(env, mode, scenario, [
        { delivery: 1, step: second.key, fault: 'killed-before' },
      ]);
      expect(run.deliveries).toHaveLength(2);
      expect(run.outcome).toMatchObject({ appliedOnce: 2, duplicated: 0, lost: 0, consistent: true });
      expect(
        run.outcome.suppressedDuplicates,
        'the finished event skipped on the redelivery',
      ).toBeGreaterThanOrEqual(1);
    },
    60_000,
  );
});

/**
 * Two deliveries of one event in flight at once (the explorer's two-deliveries interleavings, every
 * order of the two invocations' steps, a stale delete's both outcomes, conflicts; no deadline, to
 * keep it small here: test/integration/explore-interleavings.test.ts, in test:soak, runs every
 * mode's every schedule, at-most-once's duplicates only past its delete among them).
 */
describe('two deliveries of one event in flight at once', () => {
  const interleaved = (mode: Mode) =>
    exploreMode(env, mode, {
      scenario: { events: 1, accounts: 1, resent: 0 },
      depth: 1,
      concurrency: 8,
      interleavings: { kinds: ['two-deliveries'], deadlines: false },
    });
  const schedulesOf = (exploration: ModeExploration) => exploration.interleavings?.[0]?.schedules ?? [];
  const duplicated = (run: ReturnType<typeof schedulesOf>[number]) =>
    ((run.detail as { counts?: { duplicated: number } } | undefined)?.counts?.duplicated ?? 0) > 0;

  it('credit-then-marker duplicates with no fault injected (both read "absent"); effectively-once is exact in every schedule of the same scenario', async () => {
    // A reads "absent", B receives the event again and reads "absent", A credits and marks, B
    // credits and marks: no crash, no lost response, no refusal (the full enumeration: test:soak).
    const bothRead = 'two-deliveries:A,B,B,A,A,B,B,B';
    const [checkThenAct, effectivelyOnce] = await Promise.all([
      exploreMode(env, 'credit-then-marker', {
        scenario: { events: 1, accounts: 1, resent: 0 },
        depth: 1,
        concurrency: 1,
        interleavings: { schedules: [bothRead] },
      }),
      interleaved('effectively-once'),
    ]);
    const [replayed] = schedulesOf(checkThenAct);
    expect(replayed?.injected).toBe(false);
    expect(replayed?.timeline.map((entry) => `${entry.actor} ${entry.label}`).slice(0, 3)).toEqual([
      'A GetItem evt-0000000',
      'B receive (its second delivery)',
      'B GetItem evt-0000000',
    ]);
    expect(replayed && duplicated(replayed)).toBe(true);
    const runs = schedulesOf(effectivelyOnce);
    expect(runs.length).toBeGreaterThan(20);
    expect(
      runs.filter((run) => !(run.detail as { exact?: boolean }).exact).map((run) => run.schedule),
    ).toEqual([]);
  }, 120_000);
});

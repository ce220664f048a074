import { describe, expect, it } from 'vitest';
import { type Actor, type HeldStep, type Release, Scheduler } from './scheduler.js';

function request(actor: Actor, label: string, extra: Partial<HeldStep> = {}): HeldStep {
  return {
    actor,
    kind: 'request',
    label,
    key: `${label}:1:1`,
    writes: [],
    transaction: false,
    deletes: false,
    tokenRetry: false,
    running: true,
    ...extra,
  };
}

function scheduler(
  schedule: readonly string[] = [],
  deadlines = false,
  staleOutcomes: readonly ('deleted' | 'kept')[] = [],
) {
  const ended: Actor[] = [];
  const started = Date.now();
  const made = new Scheduler(schedule, {
    staleOutcomes: (actor) => (actor === 'A' ? staleOutcomes : []),
    timeOut: (actor) => ended.push(actor),
    // A's deadline: its function timeout (2 s) after it started.
    deadlineOf: () => started + 2_000,
    watchdogMs: 60_000,
    deadlines,
  });
  return { made, ended };
}

/** Both actors hold a step; the scheduler decides once both are held. */
async function bothHeld(made: Scheduler, a: HeldStep, b: HeldStep) {
  made.start('A');
  made.start('B');
  const released: { actor: Actor; release: Release }[] = [];
  const aHeld = made.hold(a).then((release) => released.push({ actor: 'A', release }));
  const bHeld = made.hold(b).then((release) => released.push({ actor: 'B', release }));
  await Promise.race([aHeld, bHeld]);
  return released;
}

describe('the interleaving scheduler', () => {
  it('waits until every running invocation holds a step, then releases the first option: A before B', async () => {
    const { made } = scheduler();
    const released = await bothHeld(made, request('A', 'GetItem'), request('B', 'GetItem'));
    expect(released).toEqual([{ actor: 'A', release: { kind: 'send' } }]);
    expect(made.decisions).toEqual([{ options: ['A', 'B'], chosen: 'A' }]);
    expect(made.timeline).toEqual([{ actor: 'A', label: 'GetItem' }]);
  });

  it('follows the schedule it is given, and says so when a choice is no option', async () => {
    const { made } = scheduler(['B']);
    expect(await bothHeld(made, request('A', 'GetItem'), request('B', 'GetItem'))).toEqual([
      { actor: 'B', release: { kind: 'send' } },
    ]);
    const wrong = scheduler(['B=kept']).made;
    await bothHeld(wrong, request('A', 'GetItem'), request('B', 'GetItem'));
    expect(wrong.diverged).toMatch(/B=kept, is not an option here \(A B\)/);
  });

  it("offers a conflict when a write meets the other's transaction on an item both name, once per invocation", async () => {
    const transaction = { transaction: true, writes: ['t|marker', 't|balance'] };
    const { made } = scheduler(['B!A']);
    const released = await bothHeld(
      made,
      request('A', 'TransactWriteItems', transaction),
      request('B', 'TransactWriteItems', { transaction: true, writes: ['t|other-marker', 't|balance'] }),
    );
    expect(made.decisions[0]?.options).toEqual(['A', 'B', 'B!A', 'A!B']);
    // Only the shared item is the conflicting one: DynamoDB's reasons name it, `None` the rest.
    expect(released).toEqual([
      {
        actor: 'B',
        release: { kind: 'refuse', refusal: { kind: 'transaction-conflict', conflicting: [1] } },
      },
    ]);
    // The refusal reaches B (its invocation goes on by itself), and B's retry meets A's
    // transaction again: no second conflict from A.
    made.settled('B');
    void made.hold(request('B', 'TransactWriteItems', { transaction: true, writes: ['t|balance'] }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(made.decisions[1]?.options).toEqual(['A', 'B', 'A!B']);
  });

  it('offers a conflict when a transaction meets a single-item write that is ongoing on its item, and none for two plain writes', async () => {
    const { made } = scheduler();
    await bothHeld(
      made,
      request('A', 'UpdateItem', { writes: ['t|balance'] }),
      request('B', 'TransactWriteItems', { transaction: true, writes: ['t|marker', 't|balance'] }),
    );
    expect(made.decisions[0]?.options).toEqual(['A', 'B', 'B!A', 'A!B']);
    const plain = scheduler().made;
    await bothHeld(
      plain,
      request('A', 'UpdateItem', { writes: ['t|x'] }),
      request('B', 'UpdateItem', { writes: ['t|x'] }),
    );
    expect(plain.decisions[0]?.options).toEqual(['A', 'B']);
  });

  it('offers no conflict for a read, or for writes on other items', async () => {
    const { made } = scheduler();
    await bothHeld(
      made,
      request('A', 'TransactWriteItems', { transaction: true, writes: ['t|a'] }),
      request('B', 'UpdateItem', { writes: ['t|b'] }),
    );
    expect(made.decisions[0]?.options).toEqual(['A', 'B']);
  });

  it('gives a stale delete the outcomes AWS allows, decided when released, and a token retry the in-progress answer', async () => {
    const { made } = scheduler(['A=kept'], false, ['deleted', 'kept']);
    const released = await bothHeld(
      made,
      { ...request('A', 'acknowledge'), kind: 'ack', deletes: true, running: false },
      request('B', 'TransactWriteItems', { transaction: true, tokenRetry: true }),
    );
    expect(made.decisions[0]?.options).toEqual(['A=deleted', 'A=kept', 'B', 'B=in-progress']);
    expect(released).toEqual([{ actor: 'A', release: { kind: 'stale', outcome: 'kept' } }]);
    expect(made.timeline[0]?.note).toBe('stale receipt handle: kept');
    // FIFO: one outcome, no choice: the expired handle's delete is refused and the message stays.
    const fifo = scheduler([], false, ['kept']).made;
    const refused = await bothHeld(
      fifo,
      { ...request('A', 'acknowledge'), kind: 'ack', deletes: true, running: false },
      request('B', 'GetItem'),
    );
    expect(fifo.decisions[0]?.options).toEqual(['A', 'B']);
    expect(refused).toEqual([{ actor: 'A', release: { kind: 'stale', outcome: 'kept' } }]);
  });

  it('waits for a released request to be answered before it decides again, and ignores a finished invocation', async () => {
    const { made } = scheduler();
    await bothHeld(made, request('A', 'GetItem'), request('B', 'GetItem'));
    // A's GetItem is in flight; A sends another request at once, which holds: A is still busy.
    made.enter('A');
    void made.hold(request('A', 'PutItem'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(made.decisions).toHaveLength(1);
    made.settled('A');
    await new Promise((resolve) => setImmediate(resolve));
    expect(made.decisions).toHaveLength(2);
    // A request whose items could not be read leaves; a finished invocation's later step is ignored.
    const other = scheduler().made;
    other.start('A');
    other.start('B');
    other.enter('A');
    void other.hold(request('B', 'GetItem'));
    other.leave('A');
    other.finish('A');
    void other.hold(request('A', 'PutItem'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(other.timeline).toEqual([{ actor: 'B', label: 'GetItem' }]);
  });

  it('releases a request an invocation sent at once with its waiting one right after it, said so', async () => {
    const { made } = scheduler();
    made.start('A');
    const order: string[] = [];
    made.enter('A');
    made.enter('A');
    const first = made.hold(request('A', 'GetItem')).then(() => order.push('first'));
    const second = made.hold(request('A', 'PutItem')).then(() => order.push('second'));
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
    expect(made.timeline.map((entry) => entry.note)).toEqual([
      undefined,
      'sent at once with the step before: not interleaved',
    ]);
  });

  it("ends A at its deadline, and moves the clock past it (Powertools' INPROGRESS expiry reads it)", async () => {
    const { made, ended } = scheduler(['A-timeout'], true);
    const before = made.clock();
    await Promise.race([
      bothHeld(made, request('A', 'UpdateItem'), request('B', 'GetItem')),
      new Promise((resolve) => setTimeout(resolve, 20)),
    ]);
    expect(made.decisions[0]?.options).toEqual(['A', 'B', 'A-timeout']);
    expect(ended).toEqual(['A']);
    expect(made.clock()).toBeGreaterThan(before + 1_900);
    expect(made.clock()).toBeLessThanOrEqual(before + 2_001);
  });
});

import { describe, expect, it } from 'vitest';
import { readMessageBody } from '../../../../contract/message.js';
import {
  assertRetryKeepsOrder,
  buildManifest,
  POISON_KINDS,
  SQS_MAX_PAYLOAD_BYTES,
  sendBatches,
} from '../../../../harness/run/producer.js';

describe('producer manifest', () => {
  it('is reproducible from the seed and differs for another seed', () => {
    const at = new Date('2026-01-01T00:00:00.000Z');
    expect(buildManifest('run-1', 'a', 100, 10, undefined, at)).toEqual(
      buildManifest('run-1', 'a', 100, 10, undefined, at),
    );
    expect(buildManifest('run-1', 'b', 100, 10).events).not.toEqual(
      buildManifest('run-1', 'a', 100, 10).events,
    );
  });

  it('stamps unique event ids, valid bodies, integer cents, and sums the expected money', () => {
    const createdAt = new Date('2026-01-01T00:00:00.000Z');
    const manifest = buildManifest('run-1', 'seed', 1000, 7, undefined, createdAt);
    expect(new Set(manifest.events.map((m) => m.eventId)).size).toBe(1000);
    expect(new Set(manifest.events.map((m) => m.accountId)).size).toBe(7);
    expect(manifest.messages).toHaveLength(1000);
    for (const [index, message] of manifest.messages.entries()) {
      const event = manifest.events[index];
      // Every body carries the event's creation time, the age guard's input; the manifest does not.
      expect(readMessageBody(message.body)).toEqual({
        ...event,
        runId: 'run-1',
        balanceAfterCents: expect.any(Number),
        createdAt: createdAt.toISOString(),
      });
    }
    expect(manifest.expectedCents).toBe(manifest.events.reduce((sum, m) => sum + m.amountCents, 0));
  });

  const parsed = (body: string): Record<string, unknown> => {
    try {
      return JSON.parse(body) as Record<string, unknown>;
    } catch {
      return {}; // malformed-json poison
    }
  };

  it("stamps every body with its account's balance after it: the running sum of the account's valid events, poison changing nothing", () => {
    const manifest = buildManifest('run-1', 'seed', 500, 5, { poisonRate: 0.1, producerDuplicateRate: 0.1 });
    const running = new Map<string, number>();
    const states = new Map<string, number>();
    for (const event of manifest.events) {
      const after =
        (running.get(event.accountId) ?? 0) + (event.poison === undefined ? event.amountCents : 0);
      running.set(event.accountId, after);
      states.set(event.eventId, after);
    }
    expect(manifest.poison).toBeGreaterThan(0);
    for (const message of manifest.messages) {
      // Poison bodies too, where they parse as JSON: the balance before them.
      const body = parsed(message.body.length < 100_000 ? message.body : '{}');
      if (typeof body.balanceAfterCents === 'number')
        expect(body.balanceAfterCents).toBe(states.get(message.eventId));
      else expect(manifest.events.find((e) => e.eventId === message.eventId)?.poison).toBeDefined();
    }
    // The last state of each account is the account's expected balance: they add up to the money.
    const finals = [...running.values()].reduce((sum, cents) => sum + cents, 0);
    expect(finals).toBe(manifest.expectedCents);
  });

  it('sends drawn events as invalid bodies of every kind, none of which the handlers accept, and keeps them out of the expected money', () => {
    const manifest = buildManifest('run-1', 'seed', 2000, 7, { poisonRate: 0.1, producerDuplicateRate: 0 });
    const poison = manifest.events.filter((event) => event.poison !== undefined);
    expect(manifest.poison).toBe(poison.length);
    expect(poison.length).toBeGreaterThan(120);
    expect(poison.length).toBeLessThan(280);
    expect(new Set(poison.map((event) => event.poison))).toEqual(new Set(Object.keys(POISON_KINDS)));
    const bodies = new Map(manifest.messages.map((message) => [message.eventId, message.body]));
    for (const event of poison) {
      const error = readMessageBody(bodies.get(event.eventId) ?? '');
      expect(error, `${event.poison} must be refused`).toBeInstanceOf(Error);
    }
    const valid = manifest.events.filter((event) => event.poison === undefined);
    expect(manifest.expectedCents).toBe(valid.reduce((sum, m) => sum + m.amountCents, 0));
  });

  it('draws the same poison and re-sends for a seed whatever else changes, so every mode gets the same schedule', () => {
    const faults = { poisonRate: 0.2, producerDuplicateRate: 0.2 };
    const a = buildManifest('run-a', 'seed', 300, 7, faults);
    const b = buildManifest('run-b', 'seed', 300, 7, faults);
    expect(a.events).toEqual(b.events);
    expect(a.messages.map((m) => m.eventId)).toEqual(b.messages.map((m) => m.eventId));
  });

  it('re-sends drawn valid events as a second identical message, right after the first', () => {
    const manifest = buildManifest('run-1', 'seed', 1000, 7, { poisonRate: 0, producerDuplicateRate: 0.1 });
    expect(manifest.messages).toHaveLength(1000 + manifest.producerDuplicates);
    expect(manifest.producerDuplicates).toBeGreaterThan(50);
    const twice = manifest.messages.filter(
      (message, index) => manifest.messages[index + 1]?.eventId === message.eventId,
    );
    expect(twice).toHaveLength(manifest.producerDuplicates);
    for (const message of twice) {
      const next = manifest.messages[manifest.messages.indexOf(message) + 1];
      expect(next?.body).toBe(message.body);
    }
  });

  it('batches at most 10 messages and never more than SQS accepts in one request', () => {
    const manifest = buildManifest('run-1', 'seed', 3000, 7, { poisonRate: 0.05, producerDuplicateRate: 0 });
    const batches = sendBatches(manifest.messages);
    expect(batches.flat()).toEqual(manifest.messages);
    for (const batch of batches) {
      expect(batch.length).toBeLessThanOrEqual(10);
      // Body and the two attributes (names, types, values) count toward SQS's limit.
      const bytes = batch.reduce((sum, message) => sum + Buffer.byteLength(message.body) + 100, 0);
      expect(bytes).toBeLessThanOrEqual(SQS_MAX_PAYLOAD_BYTES);
    }
    expect(batches.some((batch) => batch.some((message) => message.body.length > 200_000))).toBe(true);
  });

  it('resends refused FIFO entries only when no later entry of their group was accepted', () => {
    const entry = (id: string, group: string) => ({ Id: id, MessageBody: '{}', MessageGroupId: group });
    const batch = [entry('0', 'a'), entry('1', 'b'), entry('2', 'a'), entry('3', 'a')];
    // a's last two refused, b accepted: resending them keeps a's order.
    expect(() => assertRetryKeepsOrder(batch, new Set(['2', '3']))).not.toThrow();
    // a's middle entry refused and the one after it accepted: a resend would land behind it.
    expect(() => assertRetryKeepsOrder(batch, new Set(['2']))).toThrow(/FIFO group a .*behind its successor/);
  });
});

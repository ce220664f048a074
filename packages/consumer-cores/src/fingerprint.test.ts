import { describe, expect, it } from 'vitest';
import { fingerprintOf } from './fingerprint.js';

describe('fingerprintOf', () => {
  const event = { eventId: 'evt-1', createdAt: '2026-01-01T00:00:00Z', accountId: 'a', amountCents: 5 };

  it('is SHA-256 of the event as canonical JSON, without createdAt', async () => {
    // sha256('{"accountId":"a","amountCents":5,"eventId":"evt-1"}'), computed apart.
    expect(await fingerprintOf(event)).toBe(
      '3920ac7349d2620bace2ddbd7e6dacf7653c5a98fd85c11bee48a93df88e2ff2',
    );
  });

  it('is the same whatever the field order or the send time, and differs for another payload', async () => {
    const reordered = { amountCents: 5, accountId: 'a', createdAt: '2026-01-02T00:00:00Z', eventId: 'evt-1' };
    expect(await fingerprintOf(reordered)).toBe(await fingerprintOf(event));
    const another = { ...event, amountCents: 6 };
    expect(await fingerprintOf(another)).not.toBe(await fingerprintOf(event));
    const nested = { ...event, nested: { b: 1, a: [2, { d: 3, c: 4 }] } };
    const nestedReordered = { ...event, nested: { a: [2, { c: 4, d: 3 }], b: 1 } };
    expect(await fingerprintOf(nested)).toBe(await fingerprintOf(nestedReordered));
  });
});

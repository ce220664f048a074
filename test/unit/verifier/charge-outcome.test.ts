import { describe, expect, it } from 'vitest';
import { ChargeTally } from '../../../verifier/charge-outcome.js';
import { joinByEventId } from '../../../verifier/event-id-join.js';
import type { ManifestEvent } from '../../../verifier/manifest.js';
import type { AppliedEvent } from '../../../verifier/outcome.js';

async function* stream<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

const event = (eventId: string, extra: Partial<ManifestEvent> = {}): ManifestEvent => ({
  eventId,
  accountId: 'acct-1',
  amountCents: 100,
  ...extra,
});

/** Recorded, naming the provider's charge `ch_<eventId>_1` (its first). */
const applied = (eventId: string, chargeIds: readonly string[] = [`ch_${eventId}_1`]): AppliedEvent => ({
  eventId,
  applications: 1,
  cents: 100,
  payloadHashes: new Set(),
  chargeIds,
});

/** Joins a manifest, its applications and its dead letters, tallying the provider's charges. */
async function tally(
  manifest: readonly ManifestEvent[],
  applications: readonly AppliedEvent[],
  charges: readonly string[],
  deadLettered: readonly string[] = [],
) {
  const charged = new ChargeTally();
  const times = new Map<string, number>();
  for (const eventId of charges) {
    const n = (times.get(eventId) ?? 0) + 1;
    times.set(eventId, n);
    charged.add({ chargeId: `ch_${eventId}_${n}`, eventId, amountCents: 100 });
  }
  await joinByEventId(
    stream(manifest),
    stream(applications),
    deadLettered.map((id) => [id, new Set<string>()] as const),
    charged.sink,
  );
  return charged.finish();
}

describe('ChargeTally: the provider ledger joined by event id', () => {
  it('counts double charges, never-charged events and charges without a record', async () => {
    const counts = await tally(
      [event('a'), event('b'), event('c'), event('d')],
      [applied('a'), applied('b'), applied('c')],
      // a once; b twice; c never (recorded but never charged: a bug); d charged, never recorded
      ['a', 'b', 'b', 'd'],
    );

    expect(counts).toEqual({
      charges: 4,
      chargedCents: 400,
      overchargedCents: 100,
      doubleCharged: 1,
      neverCharged: 1,
      chargedNotRecorded: 1,
      unexpectedCharges: 0,
      // c's record names a charge the provider never executed.
      recordedChargeNotFound: 1,
    });
  });

  it("counts a record whose charge id is not one of its event's charges at the provider", async () => {
    const counts = await tally(
      [event('a'), event('b'), event('c')],
      // a: its own charge; b: a's charge id; c: no charge id at all
      [applied('a'), applied('b', ['ch_a_1']), applied('c', [])],
      ['a', 'b', 'c'],
    );

    expect(counts.recordedChargeNotFound).toBe(2);
  });

  it('a dead-lettered event was rightly never charged; a charge for an unknown or poison id is unexpected', async () => {
    const counts = await tally(
      [event('a'), event('b', { poison: 'zero-amount' })],
      [],
      ['b', 'zz'],
      ['a', 'b'],
    );

    expect(counts.neverCharged).toBe(0);
    expect(counts.unexpectedCharges).toBe(2);
  });
});

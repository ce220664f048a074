import { describe, expect, it } from 'vitest';
import { neverSentEvents } from '../../../../harness/run/experiment.js';
import type { ManifestEvent } from '../../../../verifier/manifest.js';

const event = (eventId: string, amountCents: number, poison?: string): ManifestEvent => ({
  eventId,
  accountId: 'acct-1',
  amountCents,
  ...(poison ? { poison } : {}),
});

describe('neverSentEvents: what a dual-writing producer lost before any queue', () => {
  it('counts each event the producer never sent once, its money only if it was valid', () => {
    const manifest = {
      events: [
        event('evt-0', 100),
        event('evt-1', 200),
        event('evt-2', 400, 'zero-amount'),
        event('evt-3', 800),
      ],
    };

    // evt-1 was in the manifest twice (a re-send) and lost both copies: the producer lists it once.
    expect(neverSentEvents(manifest, ['evt-1', 'evt-2'])).toEqual({ events: 2, cents: 200 });
    expect(neverSentEvents(manifest, [])).toEqual({ events: 0, cents: 0 });
  });
});

import { describe, expect, it } from 'vitest';
import { parseMessageBody } from '../../../functions/shared/message.js';
import { buildManifest } from '../../../harness/producer.js';

describe('producer manifest', () => {
  it('is reproducible from the seed and differs for another seed', () => {
    expect(buildManifest('run-1', 'a', 100, 10)).toEqual(buildManifest('run-1', 'a', 100, 10));
    expect(buildManifest('run-1', 'b', 100, 10).messages).not.toEqual(
      buildManifest('run-1', 'a', 100, 10).messages,
    );
  });

  it('stamps unique event ids, valid bodies, integer cents, and sums the expected money', () => {
    const manifest = buildManifest('run-1', 'seed', 1000, 7);
    expect(new Set(manifest.messages.map((m) => m.eventId)).size).toBe(1000);
    expect(new Set(manifest.messages.map((m) => m.accountId)).size).toBe(7);
    for (const message of manifest.messages)
      expect(parseMessageBody(JSON.stringify(message))).toEqual(message);
    expect(manifest.expectedCents).toBe(manifest.messages.reduce((sum, m) => sum + m.amountCents, 0));
  });
});

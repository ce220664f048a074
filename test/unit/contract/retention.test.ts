import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETENTION,
  MIN_MARKER_TTL_SECONDS,
  retentionOf,
  retentionRuleViolations,
} from '../../../contract/retention.js';

describe('retention', () => {
  it('keeps a margin of a tenth of the TTL, at least 5 s and at most an hour', () => {
    expect(retentionOf(10)).toMatchObject({ marginSeconds: 5, maxEventAgeSeconds: 5 });
    expect(retentionOf(60)).toMatchObject({ marginSeconds: 6, maxEventAgeSeconds: 54 });
    expect(retentionOf(30 * 86_400)).toMatchObject({
      marginSeconds: 3600,
      maxEventAgeSeconds: 30 * 86_400 - 3600,
    });
  });

  it('keeps the evidence at least as long as the markers', () => {
    expect(retentionOf(60).evidenceTtlSeconds).toBe(30 * 86_400);
    expect(retentionOf(90 * 86_400).evidenceTtlSeconds).toBe(90 * 86_400);
  });

  it('refuses a TTL too short to leave the guard anything to accept', () => {
    expect(() => retentionOf(MIN_MARKER_TTL_SECONDS - 1)).toThrow(/at least 10/);
    expect(() => retentionOf(12.5)).toThrow(RangeError);
  });

  it('holds the rule by default, and names what a short marker or a short DLQ would break', () => {
    expect(retentionRuleViolations(DEFAULT_RETENTION)).toEqual([]);
    expect(retentionRuleViolations(retentionOf(4 * 86_400)).join()).toMatch(
      /a backlog would be dead-lettered/,
    );
    expect(
      retentionRuleViolations(DEFAULT_RETENTION, {
        queueRetentionSeconds: 4 * 86_400,
        deadLetterRetentionSeconds: 86_400,
      }).join(),
    ).toMatch(/messages\s+would expire on arrival/);
  });
});

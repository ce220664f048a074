import { InvalidEventError, TooOldToDedupeError } from './errors.js';
import type { ConsumerEvent } from './event.js';

/**
 * How old an event may be and still be deduplicated: a marker remembers an event for its TTL, so
 * an older event (a redrive can bring one back at any age) could be applied a second time. Set
 * `maxAgeSeconds` below the marker TTL by `skewSeconds` at least: the clock skew between producer
 * and consumer plus the time from this check to the write.
 */
export interface AgeGuard {
  readonly maxAgeSeconds: number;
  /** Also how far in the future a `createdAt` may be: an age understated cannot be trusted. */
  readonly skewSeconds: number;
}

/**
 * Throws TooOldToDedupeError for an event older than the guard allows, or stamped further ahead
 * than the skew. An event without `createdAt` cannot be judged: InvalidEventError.
 */
export function checkAge(event: ConsumerEvent, nowMs: number, guard: AgeGuard): void {
  if (event.createdAt === undefined) throw new InvalidEventError('createdAt', 'is required by the age guard');
  const ageMs = nowMs - Date.parse(event.createdAt);
  if (ageMs <= guard.maxAgeSeconds * 1000 && ageMs >= -guard.skewSeconds * 1000) return;
  const ageSeconds = Math.round(ageMs / 1000);
  throw new TooOldToDedupeError(event.eventId, ageSeconds, guard.maxAgeSeconds);
}

/**
 * The guard for a marker TTL: a tenth of it, at least 5 s and at most an hour, is kept for clock
 * skew and the time to the write.
 */
export function ageGuardFor(markerTtlSeconds: number): AgeGuard {
  const skewSeconds = Math.min(3600, Math.max(5, Math.ceil(markerTtlSeconds / 10)));
  return { maxAgeSeconds: markerTtlSeconds - skewSeconds, skewSeconds };
}

/** The drain's progress lines and the legend printed once before them. */
import type { Mode } from '../../contract/topology.js';
import type { DrainSnapshot } from '../run/drain.js';
import { seconds } from './seconds.js';

/**
 * What the progress lines' words and abbreviations mean, said once before the first of them: their
 * counts are records as the consumers saw them, not the verifier's applications.
 */
export function progressLegend(modes: readonly Mode[]): string {
  return (
    `progress, per mode (${modes.map((mode) => `${short(mode)} ${mode}`).join(', ')}): ` +
    'done = records acknowledged (the table counts events applied once), delivered = records handed to an ' +
    'invocation, redeliveries included (narrow: done/delivered); running = in invocations now; c = crashes; ' +
    'queued = visible, invisible = received, not yet deleted (narrow: q, both); ✓ drained'
  );
}

/** `at-most-once` → `AMO`: derived, so a new mode in the topology needs no edit here. */
const short = (mode: string): string =>
  mode
    .split('-')
    .map((part) => part.charAt(0).toUpperCase())
    .join('');

/**
 * One progress line, per mode: records done (acknowledged) and delivered, records in running
 * invocations, crashes, then the queue: visible and invisible (received and not deleted: running,
 * or from a crashed batch waiting out its visibility timeout); then the elapsed time. A deployed
 * target sees only the queue, not the consumers.
 */
export function formatProgress(
  snapshot: DrainSnapshot,
  options: { readonly compact?: boolean } = {},
): string {
  const entries = Object.entries(snapshot.modes) as [Mode, NonNullable<DrainSnapshot['modes'][Mode]>][];
  if (options.compact) {
    // A narrow terminal: done/delivered, crashes, and what the queue still holds.
    const parts = entries.map(
      ([mode, s]) =>
        `${short(mode)} ${s.live ? `${s.live.acknowledged}/${s.live.deliveries} c${s.live.crashes} ` : ''}q${s.visible + s.inFlight}${s.drained ? ' ✓' : ''}`,
    );
    return `${parts.join(' │ ')} │ ${seconds(snapshot.elapsedMs)}`;
  }
  const parts = entries.map(([mode, s]) => {
    const live = s.live
      ? `done ${s.live.acknowledged}, delivered ${s.live.deliveries}, running ${s.live.inFlight}, crashes ${s.live.crashes}, `
      : '';
    return `${short(mode)} ${live}queued ${s.visible}, invisible ${s.inFlight}${s.drained ? ' ✓' : ''}`;
  });
  return `${parts.join(' │ ')} │ ${seconds(snapshot.elapsedMs)}`;
}

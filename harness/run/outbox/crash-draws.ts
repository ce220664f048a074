import { faultHits } from '../../local-aws/faults/faults.js';

/**
 * The outbox experiment's crashes, drawn like every other fault (harness/local-aws/faults/faults.ts): from
 * the seed and the event, so the same seed kills at the same events again.
 */

/**
 * Whether the producer dies after committing this event and before sending it. The same events
 * crash in both kinds (dual-write, outbox): only what the commit covered differs. A re-send of the
 * same event in the manifest (occurrence 1) draws on its own.
 */
export function producerCrashes(rate: number, seed: string, eventId: string, occurrence: number): boolean {
  return faultHits(rate, seed, 'producer-crash', eventId, occurrence);
}

/**
 * Whether the relay dies after publishing a chunk (up to 10 messages, to every queue) and before
 * checkpointing it; keyed on the chunk's last event. Per chunk, not per message: a restarted relay
 * republishes up to a whole chunk, and a per-message rate would kill a chunk of ten at ten times the
 * rate. Each relay process draws afresh (`generation`), so it need not die on the same chunk again.
 */
export function relayCrashes(rate: number, seed: string, lastEventId: string, generation: number): boolean {
  return faultHits(rate, seed, 'relay-crash', lastEventId, generation);
}

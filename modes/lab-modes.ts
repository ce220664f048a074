import type { Mode } from '../contract/topology.js';
import type { LabMode } from './kit/lab-mode.js';

/**
 * Every mode of the lab, by name: its definition (modes/kit/lab-mode.ts), loaded on demand
 * so that a tool pays only for the modes it runs. Typed per mode: a topology mode missing here, or
 * a file whose definition is another mode's, does not compile. The Lambda entry of a mode is the
 * file its loader imports, `modes/<mode>.ts` (stack/bundling.ts's handlerEntry); a unit test
 * checks that each entry's handler is its definition's.
 */
export const LAB_MODES: { readonly [M in Mode]: () => Promise<LabMode<M>> } = {
  'at-most-once': async () => (await import('./at-most-once.js')).consumer,
  'at-least-once': async () => (await import('./at-least-once.js')).consumer,
  'effectively-once': async () => (await import('./effectively-once.js')).consumer,
  'powertools-idempotency': async () => (await import('./powertools-idempotency.js')).consumer,
  'powertools-message-id': async () => (await import('./powertools-message-id.js')).consumer,
  'entry-upsert': async () => (await import('./entry-upsert.js')).consumer,
  'state-upsert': async () => (await import('./state-upsert.js')).consumer,
  'fifo-versioned': async () => (await import('./fifo-versioned.js')).consumer,
  'charge-no-key': async () => (await import('./charge-no-key.js')).consumer,
  'charge-with-key': async () => (await import('./charge-with-key.js')).consumer,
  'marker-then-credit': async () => (await import('./marker-then-credit.js')).consumer,
  'credit-then-marker': async () => (await import('./credit-then-marker.js')).consumer,
};

import type { OutboxTarget } from '../../../services/outbox/outbox.js';
import type { OutboxTableNames } from './tables.js';

/** One message of the run as the producing service handles it: its event, body and amount. */
export interface ServiceEvent {
  /** Index in the manifest's messages: the outbox item's ordering key. */
  readonly position: number;
  readonly eventId: string;
  readonly accountId: string;
  readonly body: string;
  /** The pending-balance change the service commits (the event's amount, poison or not). */
  readonly amountCents: number;
  /** 0, or 1 for the manifest's re-send of the same event: it draws its own crash. */
  readonly occurrence: number;
}

/** The parent's first message to a producer process. */
export interface ProducerWork {
  readonly type: 'work';
  readonly kind: 'outbox' | 'dual-write';
  readonly runId: string;
  readonly seed: string;
  readonly crashRate: number;
  readonly tables: OutboxTableNames;
  readonly targets: readonly OutboxTarget[];
  /** The events left to handle, from the one after the last commit of the process before. */
  readonly events: readonly ServiceEvent[];
}

/** The parent's first message to a relay process. */
export interface RelayWork {
  readonly type: 'work';
  readonly runId: string;
  readonly seed: string;
  readonly crashRate: number;
  /** How many relays ran before this one: each draws its crashes afresh. */
  readonly generation: number;
  readonly tables: OutboxTableNames;
  readonly targets: readonly OutboxTarget[];
  readonly pollMs: number;
}

/** Everything published before it reached every queue: the relay may stop once caught up. */
export interface StopMessage {
  readonly type: 'stop';
}

/** What a producer or relay process tells its parent, in the order it happened. */
export type ChildReport =
  | { readonly type: 'committed'; readonly position: number }
  | { readonly type: 'sent'; readonly target: string; readonly count: number }
  | { readonly type: 'published'; readonly positions: readonly number[] }
  /** Sent (and delivered) just before the process SIGKILLs itself: the kill is the injected one. */
  | { readonly type: 'crashing'; readonly positions: readonly number[] }
  | { readonly type: 'done' }
  | { readonly type: 'failed'; readonly error: string };

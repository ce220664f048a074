import type { Mode } from '../../../contract/topology.js';
import type { ServiceEvent } from './protocol.js';

/**
 * What the producer and relay processes reported, across their restarts: the parent's count, kept
 * by position (the manifest may hold the same event twice) and told by event id.
 */
export class Tally {
  private readonly committed = new Set<number>();
  private readonly publishedTimes = new Map<number, number>();
  private readonly sent: Partial<Record<Mode, number>> = {};
  producerCrashes = 0;
  relayCrashes = 0;
  /** When something was last committed or published: a stuck relay is told apart from a slow one. */
  lastProgressAt = Date.now();

  constructor(
    private readonly events: readonly ServiceEvent[],
    modes: readonly Mode[],
    private readonly onSent: (mode: Mode, count: number) => void = () => undefined,
  ) {
    for (const mode of modes) this.sent[mode] = 0;
  }

  commit(position: number): void {
    this.committed.add(position);
    this.lastProgressAt = Date.now();
  }

  /** The position after the last commit: where a restarted producer goes on. */
  nextToCommit(): number {
    let next = 0;
    while (this.committed.has(next)) next += 1;
    return next;
  }

  send(mode: Mode, count: number): void {
    this.sent[mode] = (this.sent[mode] ?? 0) + count;
    this.onSent(mode, count);
  }

  publish(positions: readonly number[]): void {
    for (const position of positions) {
      this.publishedTimes.set(position, (this.publishedTimes.get(position) ?? 0) + 1);
    }
    this.lastProgressAt = Date.now();
  }

  get committedCount(): number {
    return this.committed.size;
  }

  /** Every committed message reached every queue at least once. */
  allPublished(): boolean {
    for (const position of this.committed) if (!this.publishedTimes.has(position)) return false;
    return true;
  }

  unpublishedCount(): number {
    let count = 0;
    for (const position of this.committed) if (!this.publishedTimes.has(position)) count += 1;
    return count;
  }

  /**
   * Events none of whose messages was sent: a manifest re-send of the event that was sent makes up
   * for a killed first send (the consumers see the event), so only events with no copy out are lost.
   */
  neverSent(): string[] {
    const sentEvents = new Set(this.eventIds([...this.publishedTimes.keys()]));
    return this.eventIds([...this.committed].filter((position) => !this.publishedTimes.has(position))).filter(
      (eventId) => !sentEvents.has(eventId),
    );
  }

  sentTwice(): string[] {
    return this.eventIds(
      [...this.publishedTimes].filter(([, times]) => times > 1).map(([position]) => position),
    );
  }

  published(): Readonly<Partial<Record<Mode, number>>> {
    return { ...this.sent };
  }

  private eventIds(positions: readonly number[]): string[] {
    const ids = [...positions]
      .sort((a, b) => a - b)
      .map((position) => this.events[position]?.eventId ?? `position ${position}`);
    return [...new Set(ids)];
  }
}

// Order within an account: events first applied after a later event of theirs (ModeOutcome.orderViolations).
import type { ManifestEvent } from './manifest.js';
import type { AppliedEvent } from './outcome.js';

/**
 * Per account, each applied event's seq and first application time; then, in time order, every
 * event applied after one with a higher seq is a violation. Two numbers per applied event: the
 * one part of the verification whose memory grows with the run (1,000,000 events: ~16 MB).
 */
export class OrderOfApplication {
  private readonly byAccount = new Map<string, number[]>();
  /** Per account, the event id of each pair, when the ids are kept (small runs' detail). */
  private readonly idsByAccount = new Map<string, string[]>();

  constructor(private readonly keepIds: boolean) {}

  add(event: ManifestEvent, applied: AppliedEvent): void {
    const first = applied.appliedAtMs === undefined ? undefined : Math.min(...applied.appliedAtMs);
    if (event.seq === undefined || first === undefined) return;
    let pairs = this.byAccount.get(event.accountId);
    if (!pairs) {
      pairs = [];
      this.byAccount.set(event.accountId, pairs);
    }
    pairs.push(first, event.seq);
    if (this.keepIds) {
      const ids = this.idsByAccount.get(event.accountId) ?? [];
      ids.push(event.eventId);
      this.idsByAccount.set(event.accountId, ids);
    }
  }

  violations(): { count: number; eventIds?: Set<string> } {
    let count = 0;
    const late = this.keepIds ? new Set<string>() : undefined;
    for (const [account, pairs] of this.byAccount) {
      const ids = this.idsByAccount.get(account);
      const applications: [number, number, number][] = [];
      for (let index = 0; index < pairs.length; index += 2)
        applications.push([pairs[index] ?? 0, pairs[index + 1] ?? 0, index / 2]);
      // Equal times in seq order: only an application strictly earlier can precede.
      applications.sort(([timeA, seqA], [timeB, seqB]) => timeA - timeB || seqA - seqB);
      let highest = 0;
      for (const [, seq, position] of applications) {
        if (seq < highest) {
          count += 1;
          const id = ids?.[position];
          if (id !== undefined) late?.add(id);
        } else highest = seq;
      }
    }
    return late ? { count, eventIds: late } : { count };
  }
}

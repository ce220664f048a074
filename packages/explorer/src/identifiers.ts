import { createHash } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';

/**
 * Which event a request is about, from what it carries: the event's id, its message's id or
 * receipt handle, Powertools' hash of either (its idempotency key), or an alias the scenario names.
 * Several events: `batch`; none: `-`.
 */
export class Identifiers {
  private readonly byIdentifier = new Map<string, string>();

  constructor(events: readonly { readonly id: string; readonly aliases?: readonly string[] }[]) {
    for (const event of events) {
      for (const identifier of [event.id, powertoolsHash(event.id), ...(event.aliases ?? [])]) {
        this.byIdentifier.set(identifier, event.id);
      }
    }
  }

  /** A delivery's records: their message ids and receipt handles name their events from now on. */
  add(records: readonly SQSRecord[], eventOf: (record: SQSRecord) => string | undefined): void {
    for (const record of records) {
      const eventId = eventOf(record);
      if (eventId === undefined) continue;
      this.byIdentifier.set(record.messageId, eventId);
      this.byIdentifier.set(record.receiptHandle, eventId);
      this.byIdentifier.set(powertoolsHash(record.messageId), eventId);
    }
    this.sortedCache = undefined;
  }

  /**
   * The events `text` names. Longer identifiers first, each taken out of the text once found, so
   * `order-10` is not also `order-1`, and a request naming both is about both. `ignore`: strings
   * that name no event (the cell's own id, in its tables' names and queue URLs).
   */
  eventOf(text: string, ignore: readonly string[] = []): string {
    let rest = text;
    for (const each of ignore) if (each !== '') rest = rest.split(each).join(' ');
    const events = new Set<string>();
    for (const [identifier, eventId] of this.sorted()) {
      if (!rest.includes(identifier)) continue;
      events.add(eventId);
      rest = rest.split(identifier).join(' ');
    }
    if (events.size === 1) return [...events][0] as string;
    return events.size === 0 ? '-' : 'batch';
  }

  private sortedCache: [string, string][] | undefined;

  private sorted(): [string, string][] {
    this.sortedCache ??= [...this.byIdentifier].sort(([a], [b]) => b.length - a.length);
    return this.sortedCache;
  }
}

/** The hash in Powertools' idempotency key of what it selected (BasePersistenceLayer: MD5 of its JSON, base64). */
export function powertoolsHash(selected: unknown): string {
  return createHash('md5').update(JSON.stringify(selected)).digest('base64');
}

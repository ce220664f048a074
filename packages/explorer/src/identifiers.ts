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
  }

  eventOf(text: string): string {
    const found = [...this.byIdentifier].filter(([identifier]) => text.includes(identifier));
    // `order-1` inside `order-10` names order-10 only.
    const events = new Set(
      found
        .filter(
          ([identifier]) => !found.some(([other]) => other !== identifier && other.includes(identifier)),
        )
        .map(([, eventId]) => eventId),
    );
    if (events.size === 1) return [...events][0] as string;
    return events.size === 0 ? '-' : 'batch';
  }
}

/** The hash in Powertools' idempotency key of what it selected (BasePersistenceLayer: MD5 of its JSON, base64). */
export function powertoolsHash(selected: unknown): string {
  return createHash('md5').update(JSON.stringify(selected)).digest('base64');
}

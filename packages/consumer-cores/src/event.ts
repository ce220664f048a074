import type { SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { InvalidEventError } from './errors.js';

/**
 * What every core needs of a message: a stable `eventId`, stamped once by the producer and kept by
 * every re-send and redrive (the SQS `messageId` is neither), and `createdAt` where the age guard
 * applies. Unknown fields are kept: the payload is the team's.
 */
export const EventSchema = v.looseObject({
  eventId: v.pipe(v.string(), v.minLength(1), v.maxLength(512)),
  createdAt: v.optional(v.pipe(v.string(), v.check(isUtcTimestamp, 'must be a UTC ISO 8601 timestamp'))),
});

export type ConsumerEvent = v.InferOutput<typeof EventSchema>;

/**
 * Reads a record's body into an event, or throws; the team's own fields are checked by its parse.
 * It gets the record too (its message attributes may name a schema version), and may be async.
 */
export type ParseEvent<E extends ConsumerEvent> = (body: string, record: SQSRecord) => E | Promise<E>;

/**
 * The default parse: JSON, then {@link EventSchema}. Throws InvalidEventError naming the field.
 * A team with its own fields passes a parse built the same way on its schema ({@link parseWith}).
 */
export const parseEvent = (body: string): ConsumerEvent => parseWith(EventSchema)(body);

/** A parse for a valibot schema that extends {@link EventSchema}. */
export function parseWith<S extends v.GenericSchema<unknown, ConsumerEvent>>(
  schema: S,
): (body: string) => v.InferOutput<S> {
  return (body) => {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new InvalidEventError('(body)', 'is not valid JSON');
    }
    const result = v.safeParse(schema, json);
    if (result.success) return result.output;
    const issue = result.issues[0];
    throw new InvalidEventError(v.getDotPath(issue) ?? '(body)', issue.message);
  };
}

/** `YYYY-MM-DDTHH:MM:SS[.sss]Z` naming a real instant: Date.parse would read anything else loosely. */
export function isUtcTimestamp(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.test(value)) return false;
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === value.slice(0, 19);
}

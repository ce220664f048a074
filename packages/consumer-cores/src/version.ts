import { InvalidEventError } from './errors.js';

/** A stream position the producer stamped: a whole number from 1. Anything else is refused. */
export function positionOf(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidEventError(field, 'must be a whole number from 1');
  return value;
}

/**
 * The stored `version` of the item a ConditionalCheckFailed returns (ReturnValuesOnConditionCheckFailure
 * ALL_OLD), marshalled ({ N: '3' }) as the document client leaves errors, or plain.
 */
export function storedVersion(error: unknown): number | undefined {
  const value = (error as { Item?: Record<string, unknown> } | undefined)?.Item?.version;
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && 'N' in value) return Number(value.N);
  return undefined;
}

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

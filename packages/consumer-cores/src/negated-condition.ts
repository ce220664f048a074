/** The parts of a conditional write (an Update, a Delete or a ConditionCheck) its negation needs. */
export interface ConditionalWrite {
  readonly TableName: string | undefined;
  readonly Key: Record<string, unknown> | undefined;
  readonly ConditionExpression?: string | undefined;
  readonly ExpressionAttributeNames?: Record<string, string> | undefined;
  readonly ExpressionAttributeValues?: Record<string, unknown> | undefined;
}

/**
 * A ConditionCheck that passes only while `write` would still be refused: on its item,
 * `NOT (<its condition>)`, with only the placeholders that condition names (DynamoDB refuses
 * unused ones, and an Update's own expression names more). Undefined when the write has no key (a
 * Put: which of its attributes make the key is the table's, not known here) or no condition.
 *
 * @example
 * ```ts
 * const decrement = {
 *   TableName: 'stock', Key: { pk: 'SKU#A' }, ConditionExpression: 'stock >= :q',
 *   UpdateExpression: 'SET stock = stock - :q, #at = :at',
 *   ExpressionAttributeNames: { '#at': 'updatedAt' }, ExpressionAttributeValues: { ':q': 2, ':at': 'now' },
 * };
 * negatedCondition(decrement);
 * // { TableName: 'stock', Key: { pk: 'SKU#A' }, ConditionExpression: 'NOT (stock >= :q)',
 * //   ExpressionAttributeValues: { ':q': 2 } }
 * ```
 */
export function negatedCondition(write: ConditionalWrite | undefined) {
  const condition = write?.ConditionExpression;
  if (write?.TableName === undefined || write.Key === undefined || !condition) return undefined;
  // Placeholders are `#` or `:` and word characters; a condition has no string literals to skip.
  const named = new Set(condition.match(/[#:][A-Za-z0-9_]+/g));
  /** The map with only the placeholders named; none at all when it would be empty (refused too). */
  const only = <V>(map: Record<string, V> | undefined) => {
    const kept = Object.entries(map ?? {}).filter(([placeholder]) => named.has(placeholder));
    return kept.length === 0 ? undefined : Object.fromEntries(kept);
  };
  const names = only(write.ExpressionAttributeNames);
  const values = only(write.ExpressionAttributeValues);
  return {
    TableName: write.TableName,
    Key: write.Key,
    ConditionExpression: `NOT (${condition})`,
    ...(names && { ExpressionAttributeNames: names }),
    ...(values && { ExpressionAttributeValues: values }),
  };
}

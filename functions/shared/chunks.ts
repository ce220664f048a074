/** Splits a list into consecutive slices of at most `size` (SQS batch APIs take 10, BatchWriteItem 25). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

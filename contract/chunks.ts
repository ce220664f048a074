/** Splits a list into consecutive slices of at most `size` (SQS batch APIs take 10, BatchWriteItem 25). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/**
 * Consecutive batches of at most `maxCount` items whose sizes add up to at most `maxBytes` (SQS
 * batch sends: 10 messages, 1 MiB of payload in all); an item alone may reach `maxBytes`.
 */
export function sizedBatches<T>(
  items: readonly T[],
  sizeOf: (item: T) => number,
  maxBytes: number,
  maxCount = 10,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (current.length === maxCount || (current.length > 0 && bytes + size > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * DynamoDB's documented capacity rules, for requests the emulator reports no ConsumedCapacity for.
 *
 * Item size (Developer Guide, "Item sizes and formats",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 * the sum of attribute name lengths and value sizes — a string is its UTF-8 bytes; a number about
 * 1 byte per two significant digits + 1; binary its bytes; null and booleans 1 byte; a list or map
 * 3 bytes + its elements + 1 byte each.
 *
 * Units (https://aws.amazon.com/dynamodb/pricing/on-demand/, "Key terms"): a standard write request
 * unit writes an item up to 1 KB, larger items take one more per KB; a transactional write takes 2
 * per KB of each item; reads take 1 per 4 KB strongly consistent, ½ eventually consistent, 2
 * transactional.
 */

/** DynamoDB's JSON wire format of one attribute value. */
export type AttributeValue = Readonly<Record<string, unknown>>;
export type AttributeMap = Readonly<Record<string, AttributeValue>>;

const KB = 1024;

export function itemBytes(item: AttributeMap): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += utf8(name) + valueBytes(value);
  return bytes;
}

function valueBytes(value: AttributeValue): number {
  const [[type, inner] = ['NULL', true]] = Object.entries(value);
  switch (type) {
    case 'S':
      return utf8(String(inner));
    case 'N':
      return numberBytes(String(inner));
    case 'B':
      return Buffer.from(String(inner), 'base64').length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (inner as string[]).reduce((sum, entry) => sum + utf8(entry), 0);
    case 'NS':
      return (inner as string[]).reduce((sum, entry) => sum + numberBytes(entry), 0);
    case 'L':
      return 3 + (inner as AttributeValue[]).reduce((sum, entry) => sum + 1 + valueBytes(entry), 0);
    case 'M':
      return (
        3 +
        Object.entries(inner as AttributeMap).reduce(
          (sum, [name, entry]) => sum + 1 + utf8(name) + valueBytes(entry),
          0,
        )
      );
    default:
      return 0;
  }
}

/** 1 byte per two significant digits (leading and trailing zeros trimmed), + 1. */
function numberBytes(text: string): number {
  const digits = text.replace(/[-+.]|e.*$/gi, '').replace(/^0+|0+$/g, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Standard write: 1 unit per KB, rounded up, at least 1. */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / KB));
}

/** Transactional write: 2 units per KB of each item. */
export function transactionalWriteUnits(itemSizes: readonly number[]): number {
  return itemSizes.reduce((sum, bytes) => sum + 2 * writeUnits(bytes), 0);
}

/** Strongly consistent read: 1 unit per 4 KB, at least 1. */
export function readUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / (4 * KB)));
}

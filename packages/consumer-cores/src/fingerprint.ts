import { sha256Hex } from './runtime.js';

/**
 * What tells a redelivery (the same payload) from a reused event id (another payload): SHA-256 of
 * the event as canonical JSON, so field order does not matter, without its `createdAt`, so a
 * producer that stamps a re-send anew is not refused for it.
 */
export function fingerprintOf(event: { readonly createdAt?: string }): Promise<string> {
  const { createdAt: _, ...payload } = event;
  return sha256Hex(canonicalJson(payload));
}

/** JSON with object keys sorted: the same event gives the same text whatever its field order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, inner]) => `${JSON.stringify(name)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The stored fingerprint of an item DynamoDB returned on a failed condition: the document client
 * leaves a cancellation reason's item marshalled ({ S }), a ConditionalCheckFailed's not always.
 */
export function storedFingerprint(item: Record<string, unknown> | undefined): string | undefined {
  const value = item?.payloadHash;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && 'S' in value && typeof value.S === 'string')
    return value.S;
  return undefined;
}

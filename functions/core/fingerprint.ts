/**
 * What tells a redelivery (the same payload) from a reused event id (another payload): a hash of
 * the event as canonical JSON, so field order does not matter, without its `createdAt`, so a
 * producer that stamps a re-send anew is not refused for it.
 */
export function fingerprintOf(event: { readonly createdAt?: string }): string {
  const { createdAt: _, ...payload } = event;
  return hash106(canonicalJson(payload));
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
 * Two 53-bit string hashes (cyrb53, differently seeded): a fingerprint, not a secret. It only has
 * to tell two payloads of one event id apart, and needs no Node API, so the folder runs anywhere.
 */
function hash106(text: string): string {
  const cyrb53 = (seed: number): string => {
    let h1 = 0xdeadbeef ^ seed;
    let h2 = 0x41c6ce57 ^ seed;
    for (let index = 0; index < text.length; index += 1) {
      const code = text.charCodeAt(index);
      h1 = Math.imul(h1 ^ code, 2654435761);
      h2 = Math.imul(h2 ^ code, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
  };
  return cyrb53(1) + cyrb53(2);
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

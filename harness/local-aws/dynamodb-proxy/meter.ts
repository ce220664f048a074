import type { ProxyPolicy, RequestHead } from './proxy.js';
import { type JsonObject, modeOf, parseJsonObject } from './request.js';
import {
  type AttributeMap,
  type AttributeValue,
  itemBytes,
  transactionalWriteUnits,
  writeUnits,
} from './write-units.js';

/**
 * The DynamoDB proxy's metering policy, for benchmarks: every data-path request counted per mode and
 * operation, with the capacity it consumed —
 *
 * - Consumed capacity is what DynamoDB itself reports. The handlers do not ask for it, so the meter
 *   adds `ReturnConsumedCapacity: TOTAL` to data-path requests that do not set it (a response then
 *   carries one more field, which the SDK ignores). DynamoDB Local reports it for successful
 *   TransactWriteItems, PutItem and UpdateItem (measured: a transaction of a 1.5 KB item and a
 *   small one reports 6 = 2×2 + 2×1), but not with an error (a cancelled transaction, a failed
 *   condition): those are counted by DynamoDB's documented rules from the request's items
 *   (write-units.ts), and kept apart.
 * - The same rules are applied to every write too (`ruleWriteUnits`), and they are what the cost
 *   model uses: they agree with DynamoDB Local for PutItem and UpdateItem, but not for transactions —
 *   DynamoDB Local reports 2 units for a TransactWriteItems of two items under 1 KB, where AWS
 *   documents 2 per item (4). AWS bills by its rules, not by the emulator's count.
 *
 * It changes nothing else of what reaches DynamoDB. Put it first among the proxy's policies: it then
 * counts what the handlers sent and the answers they got, injected faults included (as failed).
 */

export interface OperationCounts {
  requests: number;
  /** Requests answered with an error (4xx/5xx): cancelled transactions, failed conditions. */
  failed: number;
  /** Σ ConsumedCapacity.CapacityUnits of successful answers. */
  consumedUnits: number;
  /** Write units by DynamoDB's rules from the request's items (every write, success or not). */
  ruleWriteUnits: number;
  /** Of those, the failed requests' (DynamoDB Local reports nothing for them). */
  failedRuleWriteUnits: number;
  /** Largest item written, in bytes by DynamoDB's rule (attribute names + values). */
  maxItemBytes: number;
}

export interface DynamoDbMeterStats {
  /** Per mode (`MODE#<mode>` or Powertools' `<mode>#` key in the request body), then per operation. */
  byMode: Record<string, Record<string, OperationCounts>>;
}

export interface MeterPolicy extends ProxyPolicy {
  /** Live counts, updated as answers come back. */
  readonly stats: DynamoDbMeterStats;
  /** Forgets every count (between runs that share one environment). */
  reset(): void;
}

const DATA_PATH = new Set(['TransactWriteItems', 'PutItem', 'UpdateItem', 'GetItem', 'Query', 'DeleteItem']);
const WRITES = new Set(['TransactWriteItems', 'PutItem', 'UpdateItem', 'DeleteItem']);

export function meterPolicy(): MeterPolicy {
  const stats: DynamoDbMeterStats = { byMode: {} };
  return {
    stats,
    reset: () => {
      stats.byMode = {};
    },
    admit: ({ operation }: RequestHead) => {
      if (!DATA_PATH.has(operation)) return undefined;
      return async (body, forward) => {
        const request = parseJsonObject(body);
        if (request === undefined) return forward(body);
        const answer = await forward(
          request.ReturnConsumedCapacity === undefined
            ? Buffer.from(JSON.stringify({ ...request, ReturnConsumedCapacity: 'TOTAL' }))
            : body,
        );
        count(stats.byMode, modeOf(body), operation, request, answer.status, answer.body);
        return answer;
      };
    },
  };
}

function count(
  byMode: DynamoDbMeterStats['byMode'],
  mode: string,
  operation: string,
  request: JsonObject,
  status: number,
  response: Buffer,
): void {
  byMode[mode] ??= {};
  const modeCounts = byMode[mode];
  modeCounts[operation] ??= {
    requests: 0,
    failed: 0,
    consumedUnits: 0,
    ruleWriteUnits: 0,
    failedRuleWriteUnits: 0,
    maxItemBytes: 0,
  };
  const counts = modeCounts[operation];
  counts.requests += 1;
  const rule = WRITES.has(operation) ? ruleUnits(operation, request) : { units: 0, maxItemBytes: 0 };
  counts.ruleWriteUnits += rule.units;
  counts.maxItemBytes = Math.max(counts.maxItemBytes, rule.maxItemBytes);
  if (status >= 400) {
    counts.failed += 1;
    counts.failedRuleWriteUnits += rule.units;
    return;
  }
  counts.consumedUnits += consumedUnits(parseJsonObject(response));
}

/** ConsumedCapacity is one object (single-item operations) or a list (transactions). */
function consumedUnits(response: JsonObject | undefined): number {
  const consumed = response?.ConsumedCapacity;
  const list = Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed];
  return list.reduce<number>((sum, entry: unknown) => {
    const units =
      typeof entry === 'object' && entry !== null ? Reflect.get(entry, 'CapacityUnits') : undefined;
    return sum + (typeof units === 'number' ? units : 0);
  }, 0);
}

/** Units by the documented rules, from the items the request writes (exported for its unit test). */
export function ruleUnits(operation: string, request: JsonObject): { units: number; maxItemBytes: number } {
  if (operation === 'TransactWriteItems') {
    const items = Array.isArray(request.TransactItems) ? request.TransactItems : [];
    const sizes = items.map((action: unknown) => {
      if (typeof action !== 'object' || action === null) return 0;
      const [[kind, body] = ['', {}]] = Object.entries(action);
      return writtenItemBytes(kind, body as JsonObject);
    });
    return { units: transactionalWriteUnits(sizes), maxItemBytes: Math.max(0, ...sizes) };
  }
  const kind = operation === 'PutItem' ? 'Put' : operation === 'UpdateItem' ? 'Update' : 'Delete';
  const bytes = writtenItemBytes(kind, request);
  return { units: writeUnits(bytes), maxItemBytes: bytes };
}

/**
 * The size of the item a write leaves (or, for a delete, its key): a Put's item; an Update's key
 * plus every attribute its expression sets or adds (exact for the new items these consumers
 * write; an update of an existing balance keeps the same attributes, so the same size).
 */
function writtenItemBytes(kind: string, body: JsonObject): number {
  if (kind === 'Put') return itemBytes((body.Item ?? {}) as AttributeMap);
  const key = (body.Key ?? {}) as AttributeMap;
  if (kind !== 'Update') return itemBytes(key);
  const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (body.ExpressionAttributeValues ?? {}) as AttributeMap;
  const expression = typeof body.UpdateExpression === 'string' ? body.UpdateExpression : '';
  const written: Record<string, AttributeValue> = { ...key };
  // `#name :value` pairs of SET a = :v and ADD a :v clauses.
  for (const match of expression.matchAll(/(#?[A-Za-z0-9_]+)\s*(?:=\s*)?(:[A-Za-z0-9_]+)/g)) {
    const [, nameToken = '', valueToken = ''] = match;
    const name = nameToken.startsWith('#') ? (names[nameToken] ?? nameToken) : nameToken;
    const value = values[valueToken];
    if (value !== undefined) written[name] = value;
  }
  return itemBytes(written);
}

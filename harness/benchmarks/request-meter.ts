import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { MODE_NAMES } from '../../contract/topology.js';
import {
  type AttributeMap,
  type AttributeValue,
  itemBytes,
  transactionalWriteUnits,
  writeUnits,
} from './write-units.js';

/**
 * A counting HTTP proxy in front of DynamoDB (Local), for the handlers' execution environments
 * only (their AWS_ENDPOINT_URL_DYNAMODB points here when the embedded environment is started with
 * `meterDynamoDb`). It counts every request per mode and operation and the capacity it consumed:
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
 * It never changes what reaches DynamoDB otherwise, and forwards every request (no faults): put it
 * behind nothing else, or in front of the fault proxy.
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

export interface RequestMeterStats {
  /** Per mode (`MODE#<mode>` or the Powertools key prefix `<mode>#`), then per operation. */
  byMode: Record<string, Record<string, OperationCounts>>;
}

export interface RunningRequestMeter {
  readonly endpoint: string;
  readonly stats: RequestMeterStats;
  /** Forgets every count (between runs that share one environment). */
  reset(): void;
  stop(): Promise<void>;
}

const DATA_PATH = new Set(['TransactWriteItems', 'PutItem', 'UpdateItem', 'GetItem', 'Query', 'DeleteItem']);
const WRITES = new Set(['TransactWriteItems', 'PutItem', 'UpdateItem', 'DeleteItem']);
const NO_MODE = 'other';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

export async function startRequestMeter(options: { readonly target: string }): Promise<RunningRequestMeter> {
  const target = new URL(options.target);
  const agent = new Agent({ keepAlive: true });
  const stats: RequestMeterStats = { byMode: {} };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const operation = operationOf(req.headers);
      const original = Buffer.concat(chunks);
      const request = parse(original);
      const metered = DATA_PATH.has(operation) && request !== undefined;
      const body =
        metered && request.ReturnConsumedCapacity === undefined
          ? Buffer.from(JSON.stringify({ ...request, ReturnConsumedCapacity: 'TOTAL' }))
          : original;
      const upstream = httpRequest(
        {
          protocol: target.protocol,
          hostname: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...forwarded(req.headers), 'content-length': String(body.length) },
          agent,
        },
        (response) => {
          const answer: Buffer[] = [];
          response.on('data', (chunk: Buffer) => answer.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(answer);
            if (metered) {
              count(stats, original.toString('utf8'), operation, request, response.statusCode ?? 500, text);
            }
            res.writeHead(response.statusCode ?? 502, {
              ...forwarded(response.headers),
              'content-length': String(text.length),
            });
            res.end(text);
          });
        },
      );
      upstream.once('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      upstream.end(body);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let stopping: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stats,
    reset: () => {
      stats.byMode = {};
    },
    stop: () => {
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      });
      return stopping;
    },
  };
}

type Json = Record<string, unknown>;

function count(
  stats: RequestMeterStats,
  text: string,
  operation: string,
  request: Json,
  status: number,
  response: Buffer,
): void {
  const mode = modeOf(text);
  stats.byMode[mode] ??= {};
  const modeCounts = stats.byMode[mode];
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
  counts.consumedUnits += consumedUnits(parse(response));
}

/** ConsumedCapacity is one object (single-item operations) or a list (transactions). */
function consumedUnits(response: Json | undefined): number {
  const consumed = response?.ConsumedCapacity;
  const list = Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed];
  return list.reduce<number>((sum, entry: unknown) => {
    const units =
      typeof entry === 'object' && entry !== null ? Reflect.get(entry, 'CapacityUnits') : undefined;
    return sum + (typeof units === 'number' ? units : 0);
  }, 0);
}

/** Units by the documented rules, from the items the request writes (exported for its unit test). */
export function ruleUnits(operation: string, request: Json): { units: number; maxItemBytes: number } {
  if (operation === 'TransactWriteItems') {
    const items = Array.isArray(request.TransactItems) ? request.TransactItems : [];
    const sizes = items.map((action: unknown) => {
      if (typeof action !== 'object' || action === null) return 0;
      const [[kind, body] = ['', {}]] = Object.entries(action);
      return writtenItemBytes(kind, body as Json);
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
function writtenItemBytes(kind: string, body: Json): number {
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

const MODE_KEY = /MODE#([a-z-]+)/;
/** Powertools' idempotency key: `<keyPrefix>#<hash>`, the prefix being the mode. */
const KEY_PREFIX = /"S":"([a-z-]+)#/;

function modeOf(text: string): string {
  const mode = MODE_KEY.exec(text)?.[1] ?? KEY_PREFIX.exec(text)?.[1];
  return mode !== undefined && (MODE_NAMES as readonly string[]).includes(mode) ? mode : NO_MODE;
}

function parse(body: Buffer): Json | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

function operationOf(headers: IncomingHttpHeaders): string {
  const header = headers['x-amz-target'];
  const value = Array.isArray(header) ? header[0] : header;
  return value?.slice(value.lastIndexOf('.') + 1) ?? '';
}

function forwarded(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const result: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && name !== 'content-length') result[name] = value;
  }
  return result;
}

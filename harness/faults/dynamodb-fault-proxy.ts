import { randomUUID } from 'node:crypto';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import { faultDraw } from './faults.js';

/**
 * A fault-injecting HTTP proxy in front of DynamoDB Local, for the handlers' execution environments
 * only (their AWS_ENDPOINT_URL_DYNAMODB points here): the handler code stays what is deployed, and
 * what it sees is what DynamoDB does to a client in production —
 *
 * - `throttle`: 400 ThrottlingException / ProvisionedThroughputExceededException, nothing forwarded.
 *   Both names are in the SDK's THROTTLING_ERROR_CODES, so the SDK retries them itself, with the
 *   throttling backoff base of 1 s (@smithy/core 3.41.1, dist-cjs/submodules/retry/index.js:20, :417).
 * - `server-error`: 500 InternalServerError / 503 ServiceUnavailable, nothing forwarded. Retried by
 *   the SDK as transient (TRANSIENT_ERROR_STATUS_CODES, same file :37).
 * - `lost-response`: forwarded, so DynamoDB Local applies the write, then the real answer is thrown
 *   away and the client gets a 500 InternalServerError: an answer that, as a timeout or a reset
 *   connection would, leaves the caller unable to tell whether the write happened.
 * - `conflict` (TransactWriteItems only; other operations get `throttle` instead): 400
 *   TransactionCanceledException with a TransactionConflict reason on the transaction's last item,
 *   nothing forwarded: what DynamoDB answers when another transaction holds the item (hot keys).
 *   DynamoDB Local never answers it: it serializes transactions (200 concurrent transactions on one
 *   item, 0 conflicts; test/integration/emulators.test.ts), so hot keys alone show nothing locally.
 *   The SDK does not retry it; the ledger's own bounded retry does (and counts it).
 *
 * How the SDK retries a lost TransactWriteItems: the ClientRequestToken is an idempotencyToken
 * member (TransactWriteItemsInput$, @aws-sdk/client-dynamodb 3.1169.0 dist-cjs/index.js:2656), filled
 * when the serialize step writes the body (JsonShapeSerializer2.writeValue → generateIdempotencyToken,
 * @smithy/core dist-cjs/submodules/protocols/index.js:2247; serialize step, submodules/schema/index.js:87).
 * The retry middleware runs later, in finalizeRequest, and calls `next(args)` again with the same
 * `args.request` (submodules/retry/index.js:201-211), so every attempt of one send() carries the same
 * token, and DynamoDB (and DynamoDB Local: test/integration/emulators.test.ts) answers the repeat as
 * a success without applying it again. An UpdateItem ADD has no token: a lost one is applied twice.
 * The DynamoDB client defaults to 4 attempts (dist-cjs/index.js:3584).
 */
export type DynamoDbFault = 'throttle' | 'server-error' | 'lost-response' | 'conflict';

export interface DynamoDbFaultProxyOptions {
  /** DynamoDB Local's endpoint, e.g. http://127.0.0.1:8000. */
  readonly target: string;
  readonly seed: string;
  /** Probability, per data-path request, that a fault is injected (0: pass-through). */
  readonly rate: number;
  /**
   * Test hook: the fault for the n-th data-path request (0-based), replacing the draw (and `rate`)
   * entirely; undefined means none. The variant (which throttling name, 500 or 503) is still drawn.
   */
  readonly faultFor?: (n: number) => DynamoDbFault | undefined;
}

export interface DynamoDbFaultCounts {
  throttled: number;
  serverErrors: number;
  lostResponses: number;
  conflicts: number;
}

export interface DynamoDbFaultStats extends DynamoDbFaultCounts {
  /** Every request the proxy received, data path or not. */
  requests: number;
  /** Per mode (`MODE#<mode>` in the request body), or `other` when the body names none. */
  byMode: Record<string, DynamoDbFaultCounts>;
}

export interface RunningDynamoDbFaultProxy {
  readonly endpoint: string;
  /** Live counters, updated as requests are answered. */
  readonly stats: DynamoDbFaultStats;
  /** Closes the listener and every connection, both sides; idempotent. */
  stop(): Promise<void>;
}

/** The operations a handler's data path uses; control-plane calls (DescribeTable, …) always pass. */
const FAULTABLE_OPERATIONS = new Set(['TransactWriteItems', 'UpdateItem', 'PutItem', 'GetItem', 'Query']);

const MODE_PATTERN = /MODE#([a-z-]+)/;
const NO_MODE = 'other';

/** Dropped when forwarding: they describe one connection, and the body is re-sent whole with its length. */
const HOP_BY_HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);

const ERROR_NAMESPACE = 'com.amazonaws.dynamodb.v20120810';

interface FaultAnswer {
  readonly status: number;
  readonly type: string;
  readonly message: string;
  /** Fields of the error body beyond the name and message (a cancellation's reasons). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Names and status codes as DynamoDB sends them; the messages only need to read like its own. */
const ANSWERS = {
  throttling: {
    status: 400,
    type: 'ThrottlingException',
    message: 'Throughput exceeds the current capacity of your table or index. Please try again shortly.',
  },
  provisionedThroughput: {
    status: 400,
    type: 'ProvisionedThroughputExceededException',
    message:
      'The level of configured provisioned throughput for the table was exceeded. ' +
      'Consider increasing your provisioning level with the UpdateTable API.',
  },
  internal: { status: 500, type: 'InternalServerError', message: 'Internal server error' },
  unavailable: { status: 503, type: 'ServiceUnavailable', message: 'Service unavailable' },
} as const satisfies Record<string, FaultAnswer>;

export async function startDynamoDbFaultProxy(
  options: DynamoDbFaultProxyOptions,
): Promise<RunningDynamoDbFaultProxy> {
  const target = new URL(options.target);
  const agent = new Agent({ keepAlive: true });
  const stats: DynamoDbFaultStats = {
    requests: 0,
    throttled: 0,
    serverErrors: 0,
    lostResponses: 0,
    conflicts: 0,
    byMode: {},
  };
  // Arrival order of data-path requests: only the test hook (faultFor) uses it.
  let faultable = 0;
  /** ClientRequestTokens of transactions that reached DynamoDB Local. */
  const forwardedTokens = new Set<string>();
  /** How many times each mode has sent a request about a subject: the draw's n. */
  const attempts = new Map<string, number>();

  /**
   * Drawn per subject, not per arrival: the event a request is about (its `APP#<eventId>` key), or
   * the item for counters and balances, with the mode left out and n = how often this mode asked
   * about it. So every mode gets the same faults for the same event, and a seed replays them,
   * whatever the timing; only the order of requests *within* one subject must match.
   */
  const decide = (
    operation: string,
    arrival: number,
    body: Buffer,
  ): { fault: DynamoDbFault; answer: FaultAnswer } | undefined => {
    const subject = `${operation}:${subjectOf(body)}`;
    const attemptKey = `${modeOf(body)}|${subject}`;
    const n = attempts.get(attemptKey) ?? 0;
    attempts.set(attemptKey, n + 1);
    const drawn = options.faultFor
      ? options.faultFor(arrival)
      : options.rate > 0 && faultDraw(options.seed, 'dynamodb', subject, n) < options.rate
        ? kindOf(faultDraw(options.seed, 'dynamodb-kind', subject, n))
        : undefined;
    if (drawn === undefined) return undefined;
    // Only a transaction can be cancelled by a conflict.
    const fault = drawn === 'conflict' && operation !== 'TransactWriteItems' ? 'throttle' : drawn;
    const heads = faultDraw(options.seed, 'dynamodb-variant', subject, n) < 0.5;
    return { fault, answer: answerFor(fault, heads) };
  };

  const server = createServer((req, res) => {
    stats.requests += 1;
    const operation = targetOperation(req.headers);
    const faultableOperation = FAULTABLE_OPERATIONS.has(operation);
    const arrival = faultableOperation ? faultable++ : -1;
    readBody(req).then(
      (body) => {
        const decision = faultableOperation ? decide(operation, arrival, body) : undefined;
        const counts = bucket(stats, modeOf(body));
        const token = clientRequestTokenOf(operation, body);
        // DynamoDB answers a repeat of a token it has seen with the first outcome (a success
        // without applying it again), never with a conflict: a conflict there would make the
        // ledger retry with a fresh token and apply a write whose first attempt already landed.
        const repeat = token !== undefined && forwardedTokens.has(token);
        if (decision === undefined || (decision.fault === 'conflict' && repeat)) {
          if (token !== undefined) forwardedTokens.add(token);
          forward(req, body, (upstream) => relay(upstream, res), res);
          return;
        }
        if (decision.fault === 'lost-response' && token !== undefined) forwardedTokens.add(token);
        switch (decision.fault) {
          case 'throttle':
            count(stats, counts, 'throttled');
            answerWithError(res, decision.answer);
            return;
          case 'server-error':
            count(stats, counts, 'serverErrors');
            answerWithError(res, decision.answer);
            return;
          case 'conflict':
            count(stats, counts, 'conflicts');
            answerWithError(res, conflictOn(body));
            return;
          case 'lost-response':
            // Answered only once DynamoDB Local has answered: by then the write is applied.
            forward(
              req,
              body,
              (upstream) => {
                upstream.resume();
                upstream.once('end', () => {
                  count(stats, counts, 'lostResponses');
                  answerWithError(res, decision.answer);
                });
              },
              res,
            );
            return;
        }
      },
      // The client went away before sending its whole request: nothing reached DynamoDB, nothing to answer.
      () => req.destroy(),
    );
  });

  const forward = (
    req: IncomingMessage,
    body: Buffer,
    onResponse: (upstream: IncomingMessage) => void,
    res: ServerResponse,
  ): void => {
    const upstream = httpRequest(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...forwardedHeaders(req.headers), 'content-length': String(body.length) },
        agent,
      },
      onResponse,
    );
    // Not aborted when the client disconnects: a request that reached DynamoDB is applied whether
    // or not anyone waits for the answer (a handler SIGKILLed mid-call), and so it is here.
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      if (res.headersSent) {
        res.destroy(error);
        return;
      }
      answerWithError(res, {
        status: 502,
        type: 'FaultProxyUpstreamError',
        message: `the DynamoDB fault proxy could not reach ${options.target}: ${error.code ?? error.message}`,
      });
    });
    upstream.end(body);
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      // close() alone waits for keep-alive connections to go idle and time out.
      server.closeAllConnections();
      agent.destroy();
    });
    return stopping;
  };

  return { endpoint: `http://127.0.0.1:${port}`, stats, stop };
}

/** The event a request is about (its application record or marker key), else the item's sort key. */
function subjectOf(body: Buffer): string {
  const text = body.toString('utf8');
  return APPLICATION_KEY.exec(text)?.[1] ?? SORT_KEY.exec(text)?.[1] ?? RECORD_ID.exec(text)?.[1] ?? 'none';
}

const APPLICATION_KEY = /APP#([A-Za-z0-9._:-]+)/;
const SORT_KEY = /"sk":\{"S":"([^"]+)"\}/;
const RECORD_ID = /"id":\{"S":"([^"]+)"\}/;

function clientRequestTokenOf(operation: string, body: Buffer): string | undefined {
  if (operation !== 'TransactWriteItems') return undefined;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const token =
      typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'ClientRequestToken') : undefined;
    return typeof token === 'string' ? token : undefined;
  } catch {
    return undefined;
  }
}

/** Equal quarters: throttling, a 5xx, a lost response, a transaction conflict. */
function kindOf(draw: number): DynamoDbFault {
  if (draw < 1 / 4) return 'throttle';
  if (draw < 2 / 4) return 'server-error';
  if (draw < 3 / 4) return 'lost-response';
  return 'conflict';
}

/** A cancellation with one reason per item of the request's transaction, the conflict on the last. */
function conflictOn(body: Buffer): FaultAnswer {
  let items = 1;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const list =
      typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'TransactItems') : undefined;
    if (Array.isArray(list) && list.length > 0) items = list.length;
  } catch {
    // Not JSON: one reason is still a well-formed cancellation.
  }
  const reasons = Array.from({ length: items }, (_, index) =>
    index === items - 1
      ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }
      : { Code: 'None' },
  );
  return {
    status: 400,
    type: 'TransactionCanceledException',
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
    details: { CancellationReasons: reasons },
  };
}

function answerFor(fault: DynamoDbFault, heads: boolean): FaultAnswer {
  switch (fault) {
    case 'throttle':
      return heads ? ANSWERS.throttling : ANSWERS.provisionedThroughput;
    case 'server-error':
      return heads ? ANSWERS.internal : ANSWERS.unavailable;
    case 'lost-response':
      return ANSWERS.internal;
    case 'conflict':
      return conflictOn(Buffer.alloc(0));
  }
}

/** `DynamoDB_20120810.TransactWriteItems` → `TransactWriteItems`. */
function targetOperation(headers: IncomingHttpHeaders): string {
  const header = headers['x-amz-target'];
  const value = Array.isArray(header) ? header[0] : header;
  return value?.slice(value.lastIndexOf('.') + 1) ?? '';
}

/** The ledger's partition names the mode; Powertools' records are keyed `<mode>#<hash>`. */
function modeOf(body: Buffer): string {
  const text = body.toString('utf8');
  return MODE_PATTERN.exec(text)?.[1] ?? IDEMPOTENCY_KEY.exec(text)?.[1] ?? NO_MODE;
}

const IDEMPOTENCY_KEY = /"id":\{"S":"([a-z-]+)#[^"]*"\}/;

function bucket(stats: DynamoDbFaultStats, mode: string): DynamoDbFaultCounts {
  stats.byMode[mode] ??= { throttled: 0, serverErrors: 0, lostResponses: 0, conflicts: 0 };
  return stats.byMode[mode];
}

function count(stats: DynamoDbFaultStats, counts: DynamoDbFaultCounts, key: keyof DynamoDbFaultCounts): void {
  stats[key] += 1;
  counts[key] += 1;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete)
        reject(new Error('the client closed the connection before the request was complete'));
    });
  });
}

function forwardedHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const forwarded: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP_HEADERS.has(name)) forwarded[name] = value;
  }
  return forwarded;
}

function relay(upstream: IncomingMessage, res: ServerResponse): void {
  res.writeHead(upstream.statusCode ?? 502, forwardedHeaders(upstream.headers));
  // A client that went away destroys res, and pipeline then drops the upstream socket: nothing leaks.
  pipeline(upstream, res, () => undefined);
}

/** DynamoDB's JSON 1.0 error shape: the SDK reads the name from `__type` (or x-amzn-ErrorType). */
function answerWithError(res: ServerResponse, answer: FaultAnswer): void {
  if (res.destroyed || res.headersSent) return;
  const body = JSON.stringify({
    __type: `${ERROR_NAMESPACE}#${answer.type}`,
    message: answer.message,
    ...answer.details,
  });
  res.writeHead(answer.status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(body),
    'x-amzn-ErrorType': answer.type,
    'x-amzn-RequestId': randomUUID(),
  });
  res.end(body);
}

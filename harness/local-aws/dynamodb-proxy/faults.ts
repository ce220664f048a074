import { faultDraw } from '../faults/faults.js';
import { type DynamoDbError, errorAnswer } from './error-answer.js';
import type { Exchange, ProxyPolicy, RequestHead } from './proxy.js';
import { modeOf, parseJsonObject } from './request.js';

/**
 * The DynamoDB proxy's fault policy: what DynamoDB does to a client in production, done to the
 * handlers' requests while their code stays what is deployed —
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
 * - the outage (`outage`, not drawn): every data-path request that arrives while its window is
 *   open gets 503 ServiceUnavailable, nothing forwarded — DynamoDB unavailable in the region, as in
 *   a regional event. The SDK retries it as transient until its attempts (or its retry quota) run
 *   out, then the handler's record fails: SQS gives it back after the visibility timeout, and after
 *   the max receive count moves it to the DLQ. While the window is open the rate draws nothing.
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

export interface FaultPolicyOptions {
  readonly seed: string;
  /** Probability, per data-path request, that a fault is injected (0: pass-through). */
  readonly rate: number;
  /**
   * Test hook: the fault for the n-th data-path request (0-based, in arrival order), replacing the
   * draw (and `rate`) entirely; undefined means none. The variant (which throttling name, 500 or
   * 503) is still drawn.
   */
  readonly faultFor?: (n: number) => DynamoDbFault | undefined;
  /**
   * A DynamoDB outage: from `afterSeconds` after startClock() for `forSeconds`, every data-path
   * request is answered 503 ServiceUnavailable. Before startClock(), no window is open.
   * @default none
   */
  readonly outage?: OutageWindow | undefined;
  /** The clock the outage is timed by, in ms. @default Date.now */
  readonly now?: () => number;
}

export interface OutageWindow {
  readonly afterSeconds: number;
  readonly forSeconds: number;
}

export interface DynamoDbFaultCounts {
  throttled: number;
  serverErrors: number;
  lostResponses: number;
  conflicts: number;
  /** Requests answered 503 ServiceUnavailable because the outage window was open. */
  outageRejections: number;
}

export interface DynamoDbFaultStats extends DynamoDbFaultCounts {
  /** Every request the proxy received, data path or not. */
  requests: number;
  /** Per mode (`MODE#<mode>` or Powertools' `<mode>#` key in the request body), or `other`. */
  byMode: Record<string, DynamoDbFaultCounts>;
}

export interface FaultPolicy extends ProxyPolicy {
  /** Live counters, updated as requests are answered. */
  readonly stats: DynamoDbFaultStats;
  /**
   * Starts the outage's clock: the run's first send is now (the window opens `afterSeconds` later).
   * Only the first call counts.
   */
  startClock(): void;
}

/** The operations a handler's data path uses; control-plane calls (DescribeTable, …) always pass. */
const FAULTABLE_OPERATIONS = new Set([
  'TransactWriteItems',
  'UpdateItem',
  'PutItem',
  // Powertools deletes its INPROGRESS record when the function fails: an outage must refuse that too.
  'DeleteItem',
  'GetItem',
  'Query',
]);

/** Names and status codes as DynamoDB sends them; the messages only need to read like its own. */
const ERRORS = {
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
} as const satisfies Record<string, DynamoDbError>;

export function faultPolicy(options: FaultPolicyOptions): FaultPolicy {
  const stats: DynamoDbFaultStats = {
    requests: 0,
    throttled: 0,
    serverErrors: 0,
    lostResponses: 0,
    conflicts: 0,
    outageRejections: 0,
    byMode: {},
  };
  const now = options.now ?? Date.now;
  /** When startClock() was called, in ms; undefined before. */
  let clockStartedAt: number | undefined;
  const outageOpen = (at: number): boolean => {
    const { outage } = options;
    if (outage === undefined || clockStartedAt === undefined) return false;
    const opens = clockStartedAt + outage.afterSeconds * 1000;
    return at >= opens && at < opens + outage.forSeconds * 1000;
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
  ): { fault: DynamoDbFault; error: DynamoDbError } | undefined => {
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
    return { fault, error: errorFor(fault, heads) };
  };

  const count = (body: Buffer, key: keyof DynamoDbFaultCounts): void => {
    stats[key] += 1;
    bucket(stats, modeOf(body))[key] += 1;
  };

  const admit = ({ operation }: RequestHead): Exchange => {
    stats.requests += 1;
    const arrival = FAULTABLE_OPERATIONS.has(operation) ? faultable++ : undefined;
    // The window is judged when the request arrives, as DynamoDB would judge it.
    const unavailable = arrival !== undefined && outageOpen(now());
    return async (body, forward) => {
      // Every mode that sent a whole request shows, with zeros when nothing was injected.
      bucket(stats, modeOf(body));
      if (unavailable) {
        count(body, 'outageRejections');
        return errorAnswer(ERRORS.unavailable);
      }
      const decision = arrival === undefined ? undefined : decide(operation, arrival, body);
      const token = clientRequestTokenOf(operation, body);
      // DynamoDB answers a repeat of a token it has seen with the first outcome (a success
      // without applying it again), never with a conflict: a conflict there would make the
      // ledger retry with a fresh token and apply a write whose first attempt already landed.
      const repeat = token !== undefined && forwardedTokens.has(token);
      if (decision === undefined || (decision.fault === 'conflict' && repeat)) {
        if (token !== undefined) forwardedTokens.add(token);
        return forward(body);
      }
      switch (decision.fault) {
        case 'throttle':
          count(body, 'throttled');
          return errorAnswer(decision.error);
        case 'server-error':
          count(body, 'serverErrors');
          return errorAnswer(decision.error);
        case 'conflict':
          count(body, 'conflicts');
          return errorAnswer(conflictOn(body));
        case 'lost-response':
          if (token !== undefined) forwardedTokens.add(token);
          // Answered only once DynamoDB Local has answered: by then the write is applied.
          await forward(body);
          count(body, 'lostResponses');
          return errorAnswer(decision.error);
      }
    };
  };

  const startClock = (): void => {
    clockStartedAt ??= now();
  };

  return { stats, admit, startClock };
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
  const token = parseJsonObject(body)?.ClientRequestToken;
  return typeof token === 'string' ? token : undefined;
}

/** Equal quarters: throttling, a 5xx, a lost response, a transaction conflict. */
function kindOf(draw: number): DynamoDbFault {
  if (draw < 1 / 4) return 'throttle';
  if (draw < 2 / 4) return 'server-error';
  if (draw < 3 / 4) return 'lost-response';
  return 'conflict';
}

/** A cancellation with one reason per item of the request's transaction, the conflict on the last. */
function conflictOn(body: Buffer): DynamoDbError {
  const list = parseJsonObject(body)?.TransactItems;
  // Not a transaction's JSON: one reason is still a well-formed cancellation.
  const items = Array.isArray(list) && list.length > 0 ? list.length : 1;
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

function errorFor(fault: DynamoDbFault, heads: boolean): DynamoDbError {
  switch (fault) {
    case 'throttle':
      return heads ? ERRORS.throttling : ERRORS.provisionedThroughput;
    case 'server-error':
      return heads ? ERRORS.internal : ERRORS.unavailable;
    case 'lost-response':
      return ERRORS.internal;
    case 'conflict':
      return conflictOn(Buffer.alloc(0));
  }
}

function bucket(stats: DynamoDbFaultStats, mode: string): DynamoDbFaultCounts {
  stats.byMode[mode] ??= {
    throttled: 0,
    serverErrors: 0,
    lostResponses: 0,
    conflicts: 0,
    outageRejections: 0,
  };
  return stats.byMode[mode];
}

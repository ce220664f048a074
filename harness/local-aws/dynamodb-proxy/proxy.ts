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
import { errorAnswer, type ProxyAnswer } from './error-answer.js';
import { targetOperation } from './request.js';

/**
 * One HTTP proxy in front of DynamoDB (Local), for the handlers' execution environments only (their
 * AWS_ENDPOINT_URL_DYNAMODB points here), with policies plugged in — faults (faults.ts), metering
 * (meter.ts) — all in this one listener, so the handlers' requests take one hop whichever are on.
 *
 * Each request is read whole, handed through the policies (the first one outermost: it sees the
 * request as the handler sent it and the answer as the handler gets it), then forwarded, and the
 * answer read whole and relayed with its own length. Nothing a request does throws out of it: a
 * client that is gone before its answer (a SIGKILLed execution environment) gets none, a DynamoDB
 * that cannot be reached is a 502 in DynamoDB's error shape, and so is a policy that fails.
 */

/** A request as the policies see it, as its headers arrive. */
export interface RequestHead {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The DynamoDB operation, from X-Amz-Target; `''` without one. */
  readonly operation: string;
}

export type { ProxyAnswer };

/**
 * Sends a body on (to the next policy; after the last one, to DynamoDB) and resolves with the answer;
 * rejects with DynamoDbUnreachableError when DynamoDB could not be reached or answered only in part.
 */
export type Forward = (body: Buffer) => Promise<ProxyAnswer>;

/** How one policy handles one request once its whole body is in: answers it itself, or forwards it. */
export type Exchange = (body: Buffer, forward: Forward) => Promise<ProxyAnswer>;

export interface ProxyPolicy {
  /**
   * Called as each request's headers arrive, in arrival order, before its body is read (a request
   * whose client goes away mid-body is admitted but never exchanged). Undefined: passed on as it is.
   */
  admit(head: RequestHead): Exchange | undefined;
}

export interface DynamoDbProxyOptions {
  /** DynamoDB (Local)'s endpoint, e.g. http://127.0.0.1:8000. */
  readonly target: string;
  /** Outermost first. None: a plain pass-through. */
  readonly policies: readonly ProxyPolicy[];
}

export interface RunningDynamoDbProxy {
  readonly endpoint: string;
  /** Closes the listener and every connection, both sides; idempotent. */
  stop(): Promise<void>;
}

/** DynamoDB could not be reached, or its answer was cut off. */
export class DynamoDbUnreachableError extends Error {
  constructor(target: string, options: { cause: unknown }) {
    const { cause } = options;
    const reason = cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : cause;
    super(`the DynamoDB proxy could not reach ${target}: ${String(reason)}`, options);
    this.name = 'DynamoDbUnreachableError';
  }
}

/** Dropped when forwarding either way: they describe one connection, and a body is re-sent whole with its length. */
const HOP_BY_HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'content-length',
]);

export async function startDynamoDbProxy(options: DynamoDbProxyOptions): Promise<RunningDynamoDbProxy> {
  const target = new URL(options.target);
  const agent = new Agent({ keepAlive: true });

  const toDynamoDb =
    (head: RequestHead): Forward =>
    (body) =>
      new Promise<ProxyAnswer>((resolve, reject) => {
        const unreachable = (cause: unknown) =>
          reject(new DynamoDbUnreachableError(options.target, { cause }));
        const upstream = httpRequest(
          {
            protocol: target.protocol,
            hostname: target.hostname,
            port: target.port,
            method: head.method,
            path: head.url,
            headers: { ...connectionFree(head.headers), 'content-length': String(body.length) },
            agent,
          },
          (response) => {
            readBody(response).then(
              (answer) =>
                resolve({
                  status: response.statusCode ?? 502,
                  headers: connectionFree(response.headers),
                  body: answer,
                }),
              unreachable,
            );
          },
        );
        // Not aborted when the client disconnects: a request that reached DynamoDB is applied whether
        // or not anyone waits for the answer (a handler SIGKILLed mid-call), and so it is here.
        upstream.on('error', unreachable);
        upstream.end(body);
      });

  const exchange = async (req: IncomingMessage): Promise<ProxyAnswer | undefined> => {
    const head: RequestHead = {
      method: req.method ?? 'POST',
      url: req.url ?? '/',
      headers: req.headers,
      operation: targetOperation(req.headers),
    };
    const exchanges = options.policies.flatMap((policy) => policy.admit(head) ?? []);
    const body = await readBody(req).catch(() => undefined);
    // The client went away before sending its whole request: nothing reached DynamoDB, nothing to answer.
    if (body === undefined) return undefined;
    const through = (index: number): Forward => {
      const policy = exchanges[index];
      return policy ? (forwarded) => policy(forwarded, through(index + 1)) : toDynamoDb(head);
    };
    return through(0)(body);
  };

  const server = createServer((req, res) => {
    // Whatever happens to this request stays in it: a thrown error or a rejection becomes a 502.
    res.on('error', () => undefined);
    exchange(req)
      .then(
        (answer) => (answer === undefined ? req.destroy() : send(res, answer)),
        (error: unknown) => send(res, proxyFailure(error)),
      )
      .catch(() => res.destroy());
  });

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

  return { endpoint: `http://127.0.0.1:${port}`, stop };
}

/** Sends the answer if its client is still there to take it; a client that went away gets nothing. */
function send(res: ServerResponse, answer: ProxyAnswer): void {
  if (res.destroyed || res.headersSent || res.writableEnded) return;
  res.writeHead(answer.status, { ...answer.headers, 'content-length': String(answer.body.length) });
  res.end(answer.body);
}

function proxyFailure(error: unknown): ProxyAnswer {
  if (error instanceof DynamoDbUnreachableError)
    return errorAnswer({ status: 502, type: 'DynamoDbProxyUpstreamError', message: error.message });
  const message = error instanceof Error ? error.message : String(error);
  return errorAnswer({
    status: 502,
    type: 'DynamoDbProxyError',
    message: `the DynamoDB proxy failed: ${message}`,
  });
}

/** The whole body; rejects when the other side closed the connection before it was complete. */
export function readBody(message: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.once('end', () => resolve(Buffer.concat(chunks)));
    message.on('error', reject);
    message.once('close', () => {
      if (!message.complete) reject(new Error('the connection closed before the message was complete'));
    });
  });
}

function connectionFree(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP_HEADERS.has(name)) kept[name] = value;
  }
  return kept;
}

import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../../local-aws/dynamodb-proxy/proxy.js';
import { parseAuthorization, signatureProblem } from './sigv4.js';

/**
 * The one endpoint every request of a local deployment goes through (the functions' code, the
 * mappings' pollers, the driver, the operator): it checks who signed it (SigV4, with the signer's
 * secret), asks the authorizer whether IAM would allow it, and only then hands it to the emulator
 * (fauxqs, DynamoDB Local) or to the local control plane (CloudFormation's DescribeStacks, Lambda's
 * Invoke, the message move task, Function URLs). A denied request never reaches an emulator, and
 * gets the error AWS returns.
 */

export type GatewayService = 'sqs' | 'dynamodb' | 'lambda' | 'cloudformation';

/** One parsed API call: the operation as its API names it, and its input (wire JSON). */
export interface ParsedCall {
  readonly service: GatewayService;
  readonly operation: string;
  readonly input: Record<string, unknown>;
}

/** What the gateway answers itself (not an emulator): status, headers and body. */
export interface Answer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

export interface Denied {
  readonly allowed: false;
  /** AWS's message: "User: <arn> is not authorized to perform: <action> on resource: <arn> because …". */
  readonly message: string;
}

export interface GatewayHandlers<Caller> {
  /** The caller an access key belongs to, with its secret; undefined for an unknown key. */
  readonly callerOf: (
    accessKeyId: string,
  ) => { readonly caller: Caller; readonly secretAccessKey: string } | undefined;
  /** IAM's decision for the call; `secureTransport` says which listener it came in on. */
  readonly authorize: (
    caller: Caller,
    call: ParsedCall,
    secureTransport: boolean,
  ) => Promise<{ readonly allowed: true } | Denied>;
  /** Calls the control plane answers (everything not forwarded to an emulator). */
  readonly answer: (caller: Caller, call: ParsedCall, raw: RawRequest) => Promise<Answer | undefined>;
}

export interface RawRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

export interface RunningGateway {
  /** The endpoint that stands for AWS's TLS endpoints (`aws:SecureTransport` true): docs/deploying.md. */
  readonly endpoint: string;
  /** The same gateway as plain HTTP would reach it (`aws:SecureTransport` false). */
  readonly plainHttpEndpoint: string;
  stop(): Promise<void>;
}

const LAMBDA_PATH = /^\/2015-03-31\/functions\/([^/]+)\/(configuration|invocations)$/;
/** Local Function URLs: `/lambda-url/<function name>/<path>` (on AWS, `https://<id>.lambda-url.<region>.on.aws/<path>`). */
export const FUNCTION_URL_PATH = /^\/lambda-url\/([^/]+)(\/.*)?$/;

export async function startGateway<Caller>(options: {
  /** The deployment's Region: fauxqs names its queues after it. */
  readonly region: string;
  readonly sqsEndpoint: string;
  readonly dynamodbEndpoint: string;
  readonly handlers: GatewayHandlers<Caller>;
  /** Hears a call the authorizer could not decide (an unknown resource, an unmodelled call). */
  readonly onModelError?: (call: ParsedCall, error: Error) => void;
}): Promise<RunningGateway> {
  const serve = (secureTransport: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    void handle(req, res, secureTransport).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ __type: 'InternalFailure', message: (error as Error).message }));
    });
  };
  const handle = async (req: IncomingMessage, res: ServerResponse, secureTransport: boolean) => {
    const body = await readBody(req);
    const raw: RawRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
    const signed = parseAuthorization(req.headers.authorization);
    const known = signed ? options.handlers.callerOf(signed.accessKeyId) : undefined;
    if (!signed || !known) {
      return send(
        res,
        unrecognized(
          signed ? 'The security token included in the request is invalid.' : 'Missing Authentication Token',
        ),
      );
    }
    const problem = await signatureProblem(
      raw,
      signed,
      { accessKeyId: signed.accessKeyId, secretAccessKey: known.secretAccessKey },
      { region: options.region },
    );
    if (problem) return send(res, signatureFailure(signed.service, problem));
    const call = parseCall(signed.service, raw);
    if (!call)
      return send(
        res,
        unrecognized(`the local gateway does not serve ${signed.service} ${raw.method} ${raw.url}`, 400),
      );
    let decision: Awaited<ReturnType<GatewayHandlers<Caller>['authorize']>>;
    try {
      decision = await options.handlers.authorize(known.caller, call, secureTransport);
    } catch (error) {
      // A resource the deployment lacks, or a call the local IAM model does not know: the
      // service's own client error (never a 500, which SDKs retry), and one line for the log.
      options.onModelError?.(call, error as Error);
      return send(res, clientError(call, error as Error));
    }
    if (!decision.allowed) return send(res, denial(call, decision.message));
    const answered = await options.handlers.answer(known.caller, call, raw);
    if (answered) return send(res, answered);
    const target = call.service === 'sqs' ? options.sqsEndpoint : options.dynamodbEndpoint;
    if (call.service !== 'sqs' && call.service !== 'dynamodb') {
      return send(
        res,
        unrecognized(`the local control plane does not serve ${call.service}:${call.operation}`, 400),
      );
    }
    await forward(raw, target, res, call.service === 'sqs' ? queueUrls : undefined);
  };
  const [tls, plain] = await Promise.all([listen(serve(true)), listen(serve(false))]);
  const queueUrls = queueUrlRewrite(port(tls), options.region);
  return {
    endpoint: `http://127.0.0.1:${port(tls)}`,
    plainHttpEndpoint: `http://127.0.0.1:${port(plain)}`,
    stop: async () => {
      await Promise.all(
        [tls, plain].map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
    },
  };
}

/** The operation and input of a request, by the protocol its service speaks. */
export function parseCall(service: string, raw: RawRequest): ParsedCall | undefined {
  const target = String(raw.headers['x-amz-target'] ?? '');
  const json = () =>
    raw.body.length > 0 ? (JSON.parse(raw.body.toString('utf8')) as Record<string, unknown>) : {};
  if (service === 'sqs' && target.startsWith('AmazonSQS.')) {
    return { service, operation: target.slice('AmazonSQS.'.length), input: json() };
  }
  if (service === 'dynamodb' && target.startsWith('DynamoDB_20120810.')) {
    return { service, operation: target.slice('DynamoDB_20120810.'.length), input: json() };
  }
  // DynamoDB Streams signs as `dynamodb` too (its actions are in the dynamodb: namespace).
  if (service === 'dynamodb' && target.startsWith('DynamoDBStreams_20120810.')) {
    return { service, operation: target.slice('DynamoDBStreams_20120810.'.length), input: json() };
  }
  if (service === 'cloudformation') {
    const form = Object.fromEntries(new URLSearchParams(raw.body.toString('utf8')));
    return form.Action ? { service, operation: form.Action, input: form } : undefined;
  }
  if (service === 'lambda') {
    const path = new URL(raw.url, 'http://gateway').pathname;
    const api = LAMBDA_PATH.exec(path);
    if (api) {
      const FunctionName = decodeURIComponent(api[1] as string);
      return api[2] === 'configuration'
        ? { service, operation: 'GetFunctionConfiguration', input: { FunctionName } }
        : { service, operation: 'Invoke', input: { FunctionName } };
    }
    const url = FUNCTION_URL_PATH.exec(path);
    if (url)
      return {
        service,
        operation: 'InvokeFunctionUrl',
        input: { FunctionName: decodeURIComponent(url[1] as string) },
      };
  }
  return undefined;
}

/** The access-denied error each service returns, shaped as its SDK client parses it. */
function denial(call: ParsedCall, message: string): Answer {
  switch (call.service) {
    case 'dynamodb':
      return {
        status: 400,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message }),
      };
    case 'sqs':
      return {
        status: 403,
        // SQS's JSON protocol keeps the query protocol's error code for older clients.
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-query-error': 'AccessDenied;Sender',
        },
        body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message }),
      };
    case 'cloudformation':
      return {
        status: 403,
        headers: { 'content-type': 'text/xml' },
        body: `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>${xml(message)}</Message></Error><RequestId>local</RequestId></ErrorResponse>`,
      };
    case 'lambda':
      if (call.operation === 'InvokeFunctionUrl') {
        // A Function URL answers 403 with this body, whatever the reason (urls-auth.html).
        return {
          status: 403,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            Message:
              'Forbidden. For troubleshooting Function URL authorization issues, see: https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html',
          }),
        };
      }
      return {
        status: 403,
        headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'AccessDeniedException' },
        body: JSON.stringify({ Type: 'User', Message: message }),
      };
  }
}

/** A signature that does not hold, as each service answers it. */
function signatureFailure(service: string, message: string): Answer {
  if (service === 'cloudformation') {
    return {
      status: 403,
      headers: { 'content-type': 'text/xml' },
      body: `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code><Message>${xml(message)}</Message></Error><RequestId>local</RequestId></ErrorResponse>`,
    };
  }
  // DynamoDB answers 400 InvalidSignatureException, Lambda 403 InvalidSignatureException, SQS 403 SignatureDoesNotMatch.
  const [status, type] =
    service === 'dynamodb'
      ? [400, 'InvalidSignatureException']
      : service === 'lambda'
        ? [403, 'InvalidSignatureException']
        : [403, 'SignatureDoesNotMatch'];
  return {
    status,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': type },
    body: JSON.stringify({ __type: type, message, Message: message }),
  };
}

/** An authorizer's refusal to decide, as the service's client error: a missing resource, or a call not modelled. */
function clientError(call: ParsedCall, error: Error): Answer {
  const notFound = error.name === 'UnknownResourceError';
  switch (call.service) {
    case 'cloudformation':
      return {
        status: 400,
        headers: { 'content-type': 'text/xml' },
        body: `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>${xml(error.message)}</Message></Error><RequestId>local</RequestId></ErrorResponse>`,
      };
    case 'lambda': {
      const type = notFound ? 'ResourceNotFoundException' : 'InvalidParameterValueException';
      return {
        status: notFound ? 404 : 400,
        headers: { 'content-type': 'application/json', 'x-amzn-errortype': type },
        body: JSON.stringify({ Type: 'User', Message: error.message }),
      };
    }
    default: {
      const type =
        call.service === 'sqs'
          ? notFound
            ? 'com.amazonaws.sqs#QueueDoesNotExist'
            : 'com.amazonaws.sqs#UnsupportedOperation'
          : notFound
            ? 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException'
            : 'com.amazon.coral.validate#ValidationException';
      return {
        status: 400,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: JSON.stringify({ __type: type, message: error.message }),
      };
    }
  }
}

function unrecognized(message: string, status = 403): Answer {
  return {
    status,
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'UnrecognizedClientException' },
    body: JSON.stringify({ __type: 'UnrecognizedClientException', message }),
  };
}

export function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * The deployment's queue URLs are `http://127.0.0.1:<port>/<account>/<name>`, which resolve on any
 * machine; fauxqs names its queues `http://sqs.<region>.localhost:<port>/…`, after the Host it was
 * asked on. The gateway translates between the two, both ways, so every client (the driver, the
 * functions, the pollers) uses the deployment's URLs and fauxqs finds its own.
 */
interface UrlRewrite {
  readonly host: string;
  toEmulator(body: string): string;
  fromEmulator(body: string): string;
}

function queueUrlRewrite(gatewayPort: number, region: string): UrlRewrite {
  const local = `http://127.0.0.1:${gatewayPort}/`;
  const emulator = new RegExp(`http://sqs\\.([a-z0-9-]+)\\.localhost:${gatewayPort}/`, 'g');
  return {
    host: `127.0.0.1:${gatewayPort}`,
    toEmulator: (body) => body.replaceAll(local, `http://sqs.${region}.localhost:${gatewayPort}/`),
    fromEmulator: (body) => body.replace(emulator, local),
  };
}

/** Hands the request to the emulator, and its answer back (queue URLs translated for SQS). */
function forward(raw: RawRequest, target: string, res: ServerResponse, rewrite?: UrlRewrite): Promise<void> {
  const url = new URL(raw.url, target);
  const body = rewrite ? Buffer.from(rewrite.toEmulator(raw.body.toString('utf8'))) : raw.body;
  const headers = {
    ...raw.headers,
    ...(rewrite ? { host: rewrite.host } : {}),
    'content-length': String(body.length),
  };
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: raw.method, headers }, (incoming) => {
      incoming.on('error', reject);
      if (!rewrite) {
        res.writeHead(incoming.statusCode ?? 502, incoming.headers);
        incoming.pipe(res);
        incoming.on('end', () => resolve());
        return;
      }
      void readBody(incoming).then((answer) => {
        const text = Buffer.from(rewrite.fromEmulator(answer.toString('utf8')));
        res.writeHead(incoming.statusCode ?? 502, {
          ...incoming.headers,
          'content-length': String(text.length),
        });
        res.end(text);
        resolve();
      }, reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { ...answer.headers, 'x-amzn-requestid': 'local' });
  res.end(answer.body);
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer({ keepAliveTimeout: 60_000 }, handler);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function port(server: Server): number {
  return (server.address() as AddressInfo).port;
}

import { createHash, randomUUID } from 'node:crypto';

/**
 * The translation between an HTTP request to a Lambda Function URL and the function's invocation,
 * both ways, as Lambda documents it: "Invoking Lambda function URLs", "Request and response
 * payloads" (https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads). The
 * formats "follow the same schema as the Amazon API Gateway payload format version 2.0"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html#http-api-develop-integrations-lambda.proxy-format),
 * which says what the Lambda page leaves out: duplicate headers and query parameters are joined with
 * commas, the request's cookies go to `cookies`, and each response cookie becomes a `set-cookie`.
 * Who may invoke (AWS_IAM, SigV4) is decided before this: see iam/.
 */

export interface FunctionUrlRequest {
  readonly method: string;
  /** The path the client asked the Function URL for (`/charges`), as sent (not decoded). */
  readonly path: string;
  /** The query string, without its `?` (one with it is accepted). */
  readonly query: string;
  /** As node:http gives them (IncomingMessage.headers): any case, a repeated one as an array. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body: Buffer;
  /** The address of the TCP connection the request came on. @default 127.0.0.1 */
  readonly sourceIp?: string;
}

/** Who signed an AWS_IAM Function URL's request. */
export interface FunctionUrlCaller {
  readonly accessKeyId: string;
  /** `arn:aws:iam::<account>:user/<name>` or `arn:aws:sts::<account>:assumed-role/<role>/<session>`. */
  readonly userArn: string;
  /** IAM's unique id of the caller (`AIDA…`, or `AROA…:<session>`). @default one derived from userArn */
  readonly userId?: string;
}

export interface FunctionUrlContext {
  /** The function owner's account. */
  readonly accountId: string;
  /** The `<url-id>` of `https://<url-id>.lambda-url.<region>.on.aws`. */
  readonly urlId: string;
  readonly region: string;
  /** The signer, for an AWS_IAM Function URL; absent for auth type NONE. */
  readonly caller?: FunctionUrlCaller;
  /** @default a random UUID */
  readonly requestId?: string;
  /** @default now */
  readonly time?: Date;
}

/**
 * The event Lambda hands a function behind a Function URL (payload format 2.0). Fields the page
 * says Function URLs do not use and "sets to null or excludes" (pathParameters, stageVariables) are
 * excluded; `queryStringParameters`, `cookies` and `body` are absent when the request has none.
 */
export function functionUrlEvent(
  request: FunctionUrlRequest,
  context: FunctionUrlContext,
): Record<string, unknown> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const joined = typeof value === 'string' ? value : value.join(',');
    headers[key] = headers[key] === undefined ? joined : `${headers[key]},${joined}`;
  }
  // The request's cookies go to `cookies`, one per cookie, and not to `headers`.
  const cookies = (headers.cookie ?? '')
    .split(/[;,]/)
    .map((cookie) => cookie.trim())
    .filter((cookie) => cookie.length > 0);
  delete headers.cookie;

  const rawQueryString = request.query.startsWith('?') ? request.query.slice(1) : request.query;
  const queryStringParameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    const known = queryStringParameters[name];
    queryStringParameters[name] = known === undefined ? value : `${known},${value}`;
  }

  const time = context.time ?? new Date();
  const domainName = `${context.urlId}.lambda-url.${context.region}.on.aws`;
  const caller = context.caller;
  const body = request.body.length === 0 ? undefined : request.body;
  const text = body !== undefined && isText(headers['content-type']);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: request.path,
    rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(Object.keys(queryStringParameters).length > 0 ? { queryStringParameters } : {}),
    requestContext: {
      accountId: context.accountId,
      apiId: context.urlId,
      authentication: null,
      // "An object that contains information about the caller identity, if the function URL uses
      // the AWS_IAM auth type. Otherwise, Lambda sets this to null."
      authorizer: caller === undefined ? null : { iam: iamAuthorizer(caller) },
      domainName,
      domainPrefix: context.urlId,
      http: {
        method: request.method.toUpperCase(),
        path: request.path,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: context.requestId ?? randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: clfTime(time),
      timeEpoch: time.getTime(),
    },
    ...(body === undefined ? {} : { body: text ? body.toString('utf8') : body.toString('base64') }),
    isBase64Encoded: body !== undefined && !text,
  };
}

/** The answer a Function URL sends: `cookies` each go out as their own `set-cookie` header. */
export interface FunctionUrlAnswer {
  readonly status: number;
  /** Lower-case names, one value each. */
  readonly headers: Record<string, string>;
  /** The response's cookies, each its own `set-cookie` header (a map of headers cannot hold them). */
  readonly cookies: readonly string[];
  readonly body: string | Buffer;
}

export type FunctionResult =
  | { readonly status: 'ok'; readonly response: unknown }
  | { readonly status: 'error'; readonly errorType: string; readonly message: string };

/**
 * The HTTP answer for the function's result, as Lambda interprets it:
 * - a result with a `statusCode`: that status, its `headers`, its `body` (decoded from base64 when
 *   `isBase64Encoded`), its `cookies` as `set-cookie` headers;
 * - any other result: "If your function returns valid JSON and doesn't return a statusCode, Lambda
 *   assumes … statusCode is 200, content-type is application/json, body is the function response"
 *   (its JSON: the page's string example answers `"Hello, world!"`, quotes and all);
 * - a function error (an exception, a timeout, a crash): 502. The pages do not document a Function
 *   URL's error body; this is `{"Message":"Internal Server Error"}`, the shape of the 403 the
 *   gateway sends, and what the client sees is the status. A result whose statusCode is no HTTP
 *   status, or whose body is no string, is answered the same way (the 2.0 format calls for a string).
 */
export function functionUrlAnswer(result: FunctionResult): FunctionUrlAnswer {
  if (result.status === 'error') return INTERNAL_SERVER_ERROR;
  const response = result.response;
  if (typeof response !== 'object' || response === null || !('statusCode' in response)) {
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      cookies: [],
      body: JSON.stringify(response ?? null),
    };
  }
  const structured = response as {
    statusCode: unknown;
    headers?: unknown;
    body?: unknown;
    isBase64Encoded?: unknown;
    cookies?: unknown;
  };
  const status = Number(structured.statusCode);
  const body = structured.body ?? '';
  if (!Number.isInteger(status) || status < 100 || status > 599 || typeof body !== 'string') {
    return INTERNAL_SERVER_ERROR;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries((structured.headers as object | null) ?? {})) {
    if (value !== undefined && value !== null) headers[name.toLowerCase()] = String(value);
  }
  const cookies = Array.isArray(structured.cookies) ? structured.cookies.map(String) : [];
  return {
    status,
    headers,
    cookies,
    body: structured.isBase64Encoded === true ? Buffer.from(body, 'base64') : body,
  };
}

const INTERNAL_SERVER_ERROR: FunctionUrlAnswer = {
  status: 502,
  headers: { 'content-type': 'application/json' },
  cookies: [],
  body: JSON.stringify({ Message: 'Internal Server Error' }),
};

/**
 * Whether a request body goes to the function as text. Lambda: "If the content type of the request
 * is binary, the body is base64-encoded"; which types are text it does not list. Text here: text/*,
 * JSON, XML, JavaScript and form bodies; anything else, or no content type, is base64.
 */
export function isText(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return (
    type.startsWith('text/') ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    [
      'application/json',
      'application/xml',
      'application/javascript',
      'application/x-www-form-urlencoded',
    ].includes(type)
  );
}

/**
 * requestContext.authorizer.iam for the signer. IAM's unique ids (`AIDA…` for a user, `AROA…` for
 * a role, with `:<session>` for an assumed role) exist only in IAM: locally, unless given, one is
 * derived from the ARN, stable and shaped alike.
 */
function iamAuthorizer(caller: FunctionUrlCaller): Record<string, unknown> {
  const accountId = caller.userArn.split(':')[4] ?? '';
  const assumed = /:assumed-role\/([^/]+)\/(.+)$/.exec(caller.userArn);
  const digest = createHash('sha256')
    .update(assumed ? (assumed[1] as string) : caller.userArn)
    .digest('hex')
    .slice(0, 17)
    .toUpperCase();
  const userId = caller.userId ?? (assumed ? `AROA${digest}:${assumed[2]}` : `AIDA${digest}`);
  return {
    accessKey: caller.accessKeyId,
    accountId,
    callerId: userId,
    cognitoIdentity: null,
    principalOrgId: null,
    userArn: caller.userArn,
    userId,
  };
}

const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');

/** `12/Mar/2020:19:03:58 +0000`, the format of requestContext.time. */
function clfTime(time: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${two(time.getUTCDate())}/${MONTHS[time.getUTCMonth()]}/${time.getUTCFullYear()}:` +
    `${two(time.getUTCHours())}:${two(time.getUTCMinutes())}:${two(time.getUTCSeconds())} +0000`
  );
}

import { createHash, timingSafeEqual } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * Who signed a request, as AWS checks it: the access key names the principal, and the signature
 * must be the one that principal's secret key makes over the same canonical request
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
 * The gateway recomputes it with the SDK's own signer, over exactly the headers the caller signed,
 * after checking what the signer takes on trust: the body's hash, that `host` and every `x-amz-*`
 * header sent are signed, the credential scope, and the time (a request more than five minutes
 * from its `x-amz-date` is refused: "Protect against potential replay attacks",
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_aws-signing.html).
 */
export interface SignedBy {
  readonly accessKeyId: string;
  /** The scope's date, `YYYYMMDD`. */
  readonly date: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;
const MAX_SKEW_MS = 5 * 60 * 1000;

/** The parts of a SigV4 Authorization header, or undefined for anything else (unsigned, presigned). */
export function parseAuthorization(header: string | undefined): SignedBy | undefined {
  const match = header ? AUTHORIZATION.exec(header.trim()) : null;
  if (!match) return undefined;
  const [, accessKeyId, date, region, service, signedHeaders, signature] = match as unknown as string[];
  return {
    accessKeyId: accessKeyId as string,
    date: date as string,
    region: region as string,
    service: service as string,
    signedHeaders: (signedHeaders as string).split(';'),
    signature: signature as string,
  };
}

export interface ReceivedRequest {
  readonly method: string;
  /** The path as sent (still percent-encoded) and its query string. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/**
 * Why the signature does not hold, or undefined when it does: `secretAccessKey` made it over this
 * very request (method, path, query, the signed headers, the body), in the deployment's Region,
 * within five minutes of now.
 */
export async function signatureProblem(
  request: ReceivedRequest,
  signed: SignedBy,
  credentials: { readonly accessKeyId: string; readonly secretAccessKey: string },
  expected: { readonly region: string; readonly now?: number },
): Promise<string | undefined> {
  const amzDate = header(request, 'x-amz-date');
  const signingDate = amzDate ? parseAmzDate(amzDate) : undefined;
  if (!amzDate || !signingDate) return 'the request has no valid X-Amz-Date';
  if (Math.abs((expected.now ?? Date.now()) - signingDate.getTime()) > MAX_SKEW_MS) {
    return `Signature expired: ${amzDate} is more than 5 minutes from the server's time`;
  }
  if (signed.date !== amzDate.slice(0, 8))
    return `the credential scope's date ${signed.date} is not the request's`;
  if (signed.region !== expected.region) {
    return `Credential should be scoped to a valid region, not '${signed.region}' (this deployment is in ${expected.region})`;
  }
  const unsigned = [
    'host',
    ...Object.keys(request.headers).filter((name) => name.startsWith('x-amz-')),
  ].filter((name) => !signed.signedHeaders.includes(name) && request.headers[name] !== undefined);
  if (!signed.signedHeaders.includes('host')) unsigned.push('host');
  if (unsigned.length > 0) return `headers sent but not signed: ${[...new Set(unsigned)].join(', ')}`;
  // The signer takes a given x-amz-content-sha256 as the body's hash: check it against the body.
  const claimed = header(request, 'x-amz-content-sha256');
  if (claimed !== undefined && claimed !== createHash('sha256').update(request.body).digest('hex')) {
    return claimed === 'UNSIGNED-PAYLOAD'
      ? 'an unsigned payload is not accepted'
      : 'the body does not hash to its x-amz-content-sha256';
  }
  const url = new URL(request.url, 'http://gateway');
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const previous = query[key];
    query[key] = previous === undefined ? value : [...[previous].flat(), value];
  }
  const headers: Record<string, string> = {};
  for (const name of signed.signedHeaders) headers[name] = header(request, name) ?? '';
  const signer = new SignatureV4({
    credentials,
    region: signed.region,
    service: signed.service,
    sha256: Sha256,
  });
  const resigned = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: (headers.host ?? '').split(':')[0] ?? '',
      path: url.pathname,
      query,
      headers,
      body: request.body,
    },
    { signingDate },
  );
  const expectedSignature = parseAuthorization(
    resigned.headers.authorization ?? resigned.headers.Authorization,
  )?.signature;
  const matches =
    expectedSignature !== undefined &&
    timingSafeEqual(Buffer.from(expectedSignature), Buffer.from(signed.signature));
  return matches
    ? undefined
    : 'The request signature we calculated does not match the signature you provided.';
}

function header(request: ReceivedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** `20261205T044148Z` → its Date, or undefined. */
function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  return new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s));
}

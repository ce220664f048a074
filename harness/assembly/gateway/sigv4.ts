import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * Who signed a request, as AWS checks it: the access key names the principal, and the signature
 * must be the one that principal's secret key makes over the same canonical request
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
 * The gateway recomputes it with the SDK's own signer, over exactly the headers the caller signed.
 */
export interface SignedBy {
  readonly accessKeyId: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

/** The parts of a SigV4 Authorization header, or undefined for anything else (unsigned, presigned). */
export function parseAuthorization(header: string | undefined): SignedBy | undefined {
  const match = header ? AUTHORIZATION.exec(header.trim()) : null;
  if (!match) return undefined;
  const [, accessKeyId, , region, service, signedHeaders, signature] = match as unknown as string[];
  return {
    accessKeyId: accessKeyId as string,
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

/** Whether `signed.signature` is what `secretAccessKey` makes over this request. */
export async function signatureMatches(
  request: ReceivedRequest,
  signed: SignedBy,
  credentials: { readonly accessKeyId: string; readonly secretAccessKey: string },
): Promise<boolean> {
  const amzDate = header(request, 'x-amz-date');
  if (!amzDate) return false;
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
    { signingDate: parseAmzDate(amzDate) },
  );
  const authorization = resigned.headers.authorization ?? resigned.headers.Authorization;
  return parseAuthorization(authorization)?.signature === signed.signature;
}

function header(request: ReceivedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** `20261205T044148Z` → its Date. */
function parseAmzDate(value: string): Date {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return new Date(Number.NaN);
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  return new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s));
}

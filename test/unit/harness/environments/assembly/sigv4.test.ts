import { createHash } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import {
  parseAuthorization,
  type ReceivedRequest,
  signatureProblem,
} from '../../../../../harness/environments/assembly/gateway/sigv4.js';

const credentials = { accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'secret' };
const NOW = Date.UTC(2026, 11, 5, 12, 0, 0);

/** A request signed as the SDK signs one, with the headers it signs (x-amz-content-sha256 among them). */
async function signed(
  body: string,
  options: { region?: string; date?: number; target?: string; unsignedTarget?: boolean } = {},
): Promise<ReceivedRequest> {
  const headers: Record<string, string> = {
    host: '127.0.0.1:4566',
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-content-sha256': createHash('sha256').update(body).digest('hex'),
    ...(options.unsignedTarget ? {} : { 'x-amz-target': options.target ?? 'DynamoDB_20120810.GetItem' }),
  };
  const signer = new SignatureV4({
    credentials,
    region: options.region ?? 'us-east-1',
    service: 'dynamodb',
    sha256: Sha256,
  });
  const request = await signer.sign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: 4566,
      path: '/',
      query: {},
      headers,
      body,
    },
    { signingDate: new Date(options.date ?? NOW) },
  );
  return { method: 'POST', url: '/', headers: request.headers, body: Buffer.from(body) };
}

async function problemOf(request: ReceivedRequest, secretAccessKey = credentials.secretAccessKey) {
  const by = parseAuthorization(String(request.headers.authorization));
  if (!by) throw new Error('not signed');
  return signatureProblem(
    request,
    by,
    { accessKeyId: by.accessKeyId, secretAccessKey },
    { region: 'us-east-1', now: NOW },
  );
}

describe('the gateway’s SigV4 check', () => {
  it('accepts a request signed with the caller’s secret', async () => {
    expect(await problemOf(await signed('{"Key":{"pk":{"S":"mine"}}}'))).toBeUndefined();
  });

  it('refuses another secret', async () => {
    expect(await problemOf(await signed('{}'), 'not-the-secret')).toMatch(
      /signature we calculated does not match/,
    );
  });

  it('refuses a body swapped after signing, though its claimed hash is signed', async () => {
    const request = await signed('{"Key":{"pk":{"S":"mine"}}}');
    expect(await problemOf({ ...request, body: Buffer.from('{"Key":{"pk":{"S":"othr"}}}') })).toMatch(
      /does not hash/,
    );
  });

  it('refuses an unsigned payload', async () => {
    const request = await signed('{}');
    const headers = { ...request.headers, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };
    expect(await problemOf({ ...request, headers })).toMatch(/unsigned payload/);
  });

  it('refuses an x-amz-* header that was not signed (an operation swapped in)', async () => {
    const request = await signed('{}', { unsignedTarget: true });
    const headers = { ...request.headers, 'x-amz-target': 'DynamoDB_20120810.DeleteItem' };
    expect(await problemOf({ ...request, headers })).toMatch(/not signed: x-amz-target/);
  });

  it('refuses a request more than five minutes old (a replay)', async () => {
    expect(await problemOf(await signed('{}', { date: NOW - 6 * 60 * 1000 }))).toMatch(/Signature expired/);
  });

  it('refuses a scope in another Region', async () => {
    expect(await problemOf(await signed('{}', { region: 'mars-1' }))).toMatch(/scoped to a valid region/);
  });
});

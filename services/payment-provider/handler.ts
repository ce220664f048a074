import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { requireEnv, requireWholeSeconds } from '../../contract/config.js';
import { serveRequest } from './charges.js';
import { DEFAULT_LEASE_SECONDS, type PaymentProvider } from './provider-table.js';

/**
 * The payment provider behind a Lambda Function URL (payload format 2.0). The semantics are all in
 * charges.ts, shared with the embedded server (http-server.ts).
 */

/** The response was committed and the `x-fault-lose-response` hook asked for it to be lost. */
export class ResponseLostError extends Error {
  override readonly name = 'ResponseLostError';
}

/** Reads the provider's configuration; a missing table name fails the cold start. */
export function readProviderConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Pick<PaymentProvider, 'tableName' | 'leaseSeconds'> {
  return {
    tableName: requireEnv('PROVIDER_TABLE_NAME', env),
    leaseSeconds:
      env.PROVIDER_LEASE_SECONDS === undefined
        ? DEFAULT_LEASE_SECONDS
        : requireWholeSeconds('PROVIDER_LEASE_SECONDS', env, 1),
  };
}

/** Adapts one Function URL event to the core, and the core's answer back. */
export async function handleEvent(
  provider: PaymentProvider,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const body = event.body ?? '';
  const response = await serveRequest(provider, {
    method: event.requestContext.http.method,
    path: event.rawPath,
    headers: lowerCased(event.headers),
    body: event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body,
  });
  // A Function URL answers a function error with 502 and no body: the client learns nothing, the
  // charge stands.
  if (response.loseResponse)
    throw new ResponseLostError('response lost after the commit (x-fault-lose-response)');
  return { statusCode: response.status, headers: { ...response.headers }, body: response.body };
}

/** Function URL events carry lower-case header names already; this holds for other callers too. */
function lowerCased(headers: APIGatewayProxyEventV2['headers']): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  );
}

const provider: PaymentProvider = {
  ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})),
  ...readProviderConfig(),
};

export const handler = (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> =>
  handleEvent(provider, event);

/**
 * The payment provider as a node:http server, for the embedded environment: the same core as the
 * Lambda handler (charges.ts), behind a socket the harness can SIGKILL.
 *
 * As a child process (harness/local-aws/emulators/payment-provider.ts starts it):
 *
 *   node http-server.mjs --port 0 --dynamodb-endpoint http://127.0.0.1:8000 --table-name provider \
 *     [--lease-seconds 10]
 *
 * or the same from PROVIDER_PORT, DYNAMODB_ENDPOINT, PROVIDER_TABLE_NAME, PROVIDER_LEASE_SECONDS.
 * Port 0 picks a free one. Once listening it prints one line on stdout:
 * `{"listening":{"port":<port>}}`; everything else it says goes to stderr.
 */

import { realpathSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createPkSkTable } from '../../contract/pk-sk-table.js';
import { serveRequest } from './charges.js';
import { type PaymentProvider, PROVIDER_TTL_ATTRIBUTE } from './provider-table.js';

/** Far above any charge body; a larger one is refused before it is read whole. */
const MAX_BODY_BYTES = 64 * 1024;

/** A server answering the provider's API from `provider`. Not listening yet. */
export function createProviderServer(provider: PaymentProvider): Server {
  return createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      if (body === undefined) {
        response.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
        response.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'body too large' } }));
        return;
      }
      const answer = await serveRequest(provider, {
        method: request.method ?? 'GET',
        path: new URL(request.url ?? '/', 'http://provider').pathname,
        headers: Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [
            name,
            Array.isArray(value) ? value.join(', ') : value,
          ]),
        ),
        body,
      });
      // The charge is committed; the client sees a connection closed without an answer.
      if (answer.loseResponse) {
        request.socket.destroy();
        return;
      }
      response.writeHead(answer.status, {
        ...answer.headers,
        'content-length': Buffer.byteLength(answer.body),
      });
      response.end(answer.body);
    })().catch((error: unknown) => {
      // serveRequest answers its own failures; this is a transport fault (the client went away).
      process.stderr.write(`payment provider: request failed: ${String(error)}\n`);
      request.socket.destroy();
    });
  });
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Creates the provider's table (pk/sk, TTL) if missing, as stack/payment-provider.ts deploys it. Embedded only. */
export async function ensureProviderTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await createPkSkTable(client, tableName, { ttlAttribute: PROVIDER_TTL_ATTRIBUTE, ifAbsent: true });
}

interface ServerArgs {
  readonly port: number;
  readonly dynamodbEndpoint: string;
  readonly tableName: string;
  readonly leaseSeconds: number | undefined;
}

/** argv first, then the environment; says what is missing and how to pass it. */
export function readServerArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ServerArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      port: { type: 'string' },
      'dynamodb-endpoint': { type: 'string' },
      'table-name': { type: 'string' },
      'lease-seconds': { type: 'string' },
    },
  });
  const value = (flag: keyof typeof values, envName: string, required: boolean): string | undefined => {
    const found = values[flag] ?? env[envName];
    if (required && (found === undefined || found === '')) {
      throw new Error(`payment provider: --${flag} (or ${envName}) is required`);
    }
    return found;
  };
  const whole = (flag: keyof typeof values, envName: string, raw: string | undefined, min: number) => {
    if (raw === undefined) return undefined;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < min) {
      throw new Error(`payment provider: --${flag} (${envName}) must be a whole number ≥ ${min}, got ${raw}`);
    }
    return Number(raw);
  };
  return {
    port: whole('port', 'PROVIDER_PORT', value('port', 'PROVIDER_PORT', false), 0) ?? 0,
    dynamodbEndpoint: value('dynamodb-endpoint', 'DYNAMODB_ENDPOINT', true) as string,
    tableName: value('table-name', 'PROVIDER_TABLE_NAME', true) as string,
    leaseSeconds: whole(
      'lease-seconds',
      'PROVIDER_LEASE_SECONDS',
      value('lease-seconds', 'PROVIDER_LEASE_SECONDS', false),
      1,
    ),
  };
}

async function main(): Promise<void> {
  const args = readServerArgs(process.argv.slice(2), process.env);
  // DynamoDB Local (sharedDb) accepts any credentials; the provider never talks to AWS from here.
  const client = new DynamoDBClient({
    endpoint: args.dynamodbEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureProviderTable(client, args.tableName);
  const server = createProviderServer({
    ddb: DynamoDBDocumentClient.from(client),
    tableName: args.tableName,
    ...(args.leaseSeconds === undefined ? {} : { leaseSeconds: args.leaseSeconds }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(args.port, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ listening: { port } })}\n`);
  const close = (): void => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', close);
  process.once('SIGINT', close);
}

/** Run as a program, not imported (tests import createProviderServer); the entry's real path, as Node resolves it. */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `payment provider failed to start: ${error instanceof Error ? error.stack : error}\n`,
    );
    process.exit(1);
  });
}

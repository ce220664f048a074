import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { BUNDLING, PROJECT_ROOT } from '../../../stack/bundling.js';
import { cachedBuild } from '../bundling/bundle-cache.js';
import { supervise } from './supervised-child.js';

const SERVER_ENTRY = fileURLToPath(
  new URL('../../../services/payment-provider/http-server.ts', import.meta.url),
);
const READY_DEADLINE_MS = 20_000;
const STOP_GRACE_MS = 3_000;
const OUTPUT_TAIL_CHARS = 4_000;

/** The provider did not come up: it exited, printed no port in time, or could not reach its table. */
export class PaymentProviderStartError extends Error {
  override readonly name = 'PaymentProviderStartError';
}

export interface PaymentProviderOptions {
  /** Where its table lives (DynamoDB Local); it creates the table if missing. */
  readonly dynamodbEndpoint: string;
  /** @default 'payment-provider' */
  readonly tableName?: string;
  /** How long a request holds its key before a repeat may take it over. @default the provider's 10 s */
  readonly leaseSeconds?: number;
  /** @default 0: a free port */
  readonly port?: number;
  /** Its stderr (one line per failure, and its start-up errors) is appended here. @default kept in memory for errors */
  readonly logFile?: string;
}

export interface RunningPaymentProvider {
  /** `http://127.0.0.1:<port>`: the base URL the payment client takes. */
  readonly url: string;
  readonly tableName: string;
  readonly pid: number;
  /** SIGTERM, then SIGKILL after a grace; resolves once it is reaped. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL, now: a provider dying mid-request. stop() still resolves once it is reaped. */
  kill(): void;
}

/**
 * Starts the stand-in payment provider (services/payment-provider/http-server.ts) as a child
 * process on a free loopback port, so a test can SIGKILL it mid-request and start another on the
 * same table. Runs the esbuild bundle of the server, cached by its inputs like the functions'
 * bundles: a cached bundle starts in a fraction of the time a TypeScript loader needs.
 */
export async function startPaymentProvider(options: PaymentProviderOptions): Promise<RunningPaymentProvider> {
  const tableName = options.tableName ?? 'payment-provider';
  const bundle = join(await bundleServer(), 'payment-provider.mjs');
  const log = options.logFile === undefined ? undefined : openSync(options.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      process.execPath,
      [
        '--enable-source-maps',
        bundle,
        '--port',
        String(options.port ?? 0),
        '--dynamodb-endpoint',
        options.dynamodbEndpoint,
        '--table-name',
        tableName,
        ...(options.leaseSeconds === undefined ? [] : ['--lease-seconds', String(options.leaseSeconds)]),
      ],
      {
        stdio: ['ignore', 'pipe', log ?? 'pipe'],
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      },
    );
  } finally {
    // The child holds its own descriptor now.
    if (log !== undefined) closeSync(log);
  }
  const { spawned, exited, stop } = supervise(child, STOP_GRACE_MS);
  const stderrTail = captureTail(child);
  const output = (): string => (options.logFile === undefined ? stderrTail() : tailOfFile(options.logFile));

  try {
    const pid = await spawned.catch((error: Error) => {
      throw new PaymentProviderStartError(`could not spawn the payment provider: ${error.message}`);
    });
    const port = await listeningPort(child, exited);
    if (port === 'exited') {
      throw new PaymentProviderStartError(
        `the payment provider exited before listening (${child.signalCode ?? `exit code ${child.exitCode}`}).\n` +
          `Its output:\n${output() || '(none)'}`,
      );
    }
    if (port === 'timeout') {
      throw new PaymentProviderStartError(
        `the payment provider printed no port within ${READY_DEADLINE_MS / 1000} s ` +
          `(is DynamoDB Local at ${options.dynamodbEndpoint} up?).\nIts output:\n${output() || '(none)'}`,
      );
    }
    return {
      url: `http://127.0.0.1:${port}`,
      tableName,
      pid,
      stop,
      kill: () => {
        child.kill('SIGKILL');
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The server's bundle, built for the Node running the harness, from the cache when unchanged. */
function bundleServer(): Promise<string> {
  return cachedBuild([
    {
      absWorkingDir: PROJECT_ROOT,
      entryPoints: { 'payment-provider': SERVER_ENTRY },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: `node${process.versions.node}`,
      sourcemap: true,
      mainFields: [...BUNDLING.mainFields],
      conditions: [...BUNDLING.conditions],
      banner: { js: BUNDLING.banner },
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    },
  ]);
}

/** The port from the server's one stdout line, `{"listening":{"port":N}}`. */
function listeningPort(child: ChildProcess, exited: Promise<void>): Promise<number | 'exited' | 'timeout'> {
  const stdout = child.stdout;
  if (stdout == null) return Promise.resolve('exited');
  const lines = createInterface({ input: stdout });
  const port = new Promise<number>((resolve) => {
    lines.on('line', (line) => {
      const found = /^\{"listening":\{"port":(\d+)\}\}$/.exec(line.trim());
      if (found) resolve(Number(found[1]));
    });
  });
  return Promise.race([
    port,
    exited.then(() => 'exited' as const),
    sleep(READY_DEADLINE_MS, 'timeout' as const, { ref: false }),
  ]);
}

/** The last of stderr, for errors; reading it also keeps a chatty child from blocking on a full pipe. */
function captureTail(child: ChildProcess): () => string {
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  });
  return () => tail.trim();
}

function tailOfFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').slice(-OUTPUT_TAIL_CHARS).trim();
  } catch {
    return '';
  }
}

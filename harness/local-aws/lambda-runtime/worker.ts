/**
 * The inside of a local execution environment: one Node process that imports one handler bundle
 * (its module scope runs once: the cold start) and then serves invocations, one at a time, until
 * it is killed or dies. Started by execution-environment.ts with an IPC channel.
 */
import dns from 'node:dns';
import { pathToFileURL } from 'node:url';
import { type EnvironmentMessage, type InvokeMessage, serializeError } from './protocol.js';

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

function send(message: EnvironmentMessage): void {
  process.send?.(message);
}

function context(message: InvokeMessage) {
  const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local';
  return {
    awsRequestId: message.requestId,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:000000000000:function:${functionName}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '256',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${process.pid}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, message.deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * The SQS client sends a request to the host of its QueueUrl (not to AWS_ENDPOINT_URL_SQS), and
 * the SQS emulator's queue URLs are `http://sqs.<region>.localhost:<port>/…`. Names under
 * `.localhost` are loopback by definition (RFC 6761), but this machine's resolver does not know
 * that, so the environment resolves them itself — the handler code stays exactly as deployed.
 */
function resolveLocalhostSubdomains(): void {
  const original = dns.lookup;
  const patched = ((hostname: string, options: unknown, callback: unknown) => {
    if (!hostname.endsWith('.localhost'))
      return (original as (...args: unknown[]) => void)(hostname, options, callback);
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const all =
      typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    if (all) done(null, [{ address: '127.0.0.1', family: 4 }]);
    else done(null, '127.0.0.1', 4);
  }) as typeof dns.lookup;
  dns.lookup = patched;
}

async function main(): Promise<void> {
  // The parent ending (or disconnecting) ends the environment, like Lambda reclaiming it — also
  // while the module scope is still initialising.
  process.on('disconnect', () => process.exit(0));
  if (process.env.LOCAL_LAMBDA_RESOLVE_LOCALHOST === '1') resolveLocalhostSubdomains();
  const bundle = process.env.LOCAL_LAMBDA_BUNDLE;
  if (!bundle) throw new Error('LOCAL_LAMBDA_BUNDLE is not set');
  const started = performance.now();
  let handler: Handler;
  try {
    const exported = process.env.LOCAL_LAMBDA_EXPORT ?? 'handler';
    const module = (await import(pathToFileURL(bundle).href)) as Record<string, unknown>;
    if (typeof module[exported] !== 'function')
      throw new TypeError(`${bundle} exports no function named ${exported}`);
    handler = module[exported] as Handler;
  } catch (error) {
    send({ type: 'init-error', error: serializeError(error) });
    process.exitCode = 1;
    process.disconnect?.();
    return;
  }
  process.on('message', async (message: InvokeMessage) => {
    try {
      // Inside the environment, so the delay is part of the invocation (and of its timeout) while
      // the handler code stays exactly as deployed.
      if (message.workDelayMs) await new Promise((resolve) => setTimeout(resolve, message.workDelayMs));
      const response = await handler(message.event, context(message));
      send({
        type: 'result',
        requestId: message.requestId,
        ok: true,
        response,
        maxRssKb: process.resourceUsage().maxRSS,
      });
    } catch (error) {
      send({
        type: 'result',
        requestId: message.requestId,
        ok: false,
        error: serializeError(error),
        maxRssKb: process.resourceUsage().maxRSS,
      });
    }
  });
  send({ type: 'ready', initMs: performance.now() - started });
}

void main();

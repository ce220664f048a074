import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Bundles, bundleHandlers } from '../../harness/local-aws/bundling/bundle.js';
import {
  ExecutionEnvironment,
  type FunctionSpec,
  InitError,
} from '../../harness/local-aws/lambda-runtime/execution-environment.js';
import { LocalFunction } from '../../harness/local-aws/lambda-runtime/local-function.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/scripted-handler.mjs', import.meta.url));
const RECORDING = fileURLToPath(new URL('./lambda-runtime-fixtures/recording-handler.mjs', import.meta.url));

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('local Lambda runtime: execution environments (real child processes)', () => {
  let bundles: Bundles;
  const functions: LocalFunction[] = [];

  beforeAll(async () => {
    bundles = await bundleHandlers([]);
  });
  afterEach(async () => {
    await Promise.all(functions.splice(0).map((fn) => fn.stop()));
  });
  afterAll(async () => {
    await bundles?.dispose();
  });

  function spec(overrides: Partial<FunctionSpec> = {}): FunctionSpec {
    return {
      name: 'scripted',
      bundlePath: FIXTURE,
      workerPath: bundles.worker,
      timeoutMs: 2000,
      memoryMb: 128,
      environment: {},
      ...overrides,
    };
  }

  function localFunction(overrides: Partial<FunctionSpec> = {}): LocalFunction {
    const fn = new LocalFunction(spec(overrides));
    functions.push(fn);
    return fn;
  }

  async function identify(fn: LocalFunction) {
    const result = await fn.invoke({ action: 'identify' });
    if (result.status !== 'ok') throw new Error(`identify failed: ${result.message}`);
    return result.response as { pid: number; bornAt: number; remainingMs: number; requestId: string };
  }

  it('reuses a warm environment: one cold start, the same process, a fresh request id', async () => {
    const fn = localFunction();
    const first = await identify(fn);
    const second = await identify(fn);
    expect(second.pid).toBe(first.pid);
    expect(second.bornAt).toBe(first.bornAt);
    expect(second.requestId).not.toBe(first.requestId);
    expect(fn.stats.coldStarts).toBe(1);
  });

  it('gives the handler a context whose remaining time counts down from the function timeout', async () => {
    const { remainingMs } = await identify(localFunction({ timeoutMs: 2000 }));
    expect(remainingMs).toBeGreaterThan(1000);
    expect(remainingMs).toBeLessThanOrEqual(2000);
  });

  it('keeps the environment after a handler error', async () => {
    const fn = localFunction();
    const before = await identify(fn);
    const result = await fn.invoke({ action: 'throw' });
    expect(result).toMatchObject({
      status: 'error',
      errorType: 'Handler',
      message: expect.stringContaining('TypeError'),
    });
    expect((await identify(fn)).pid).toBe(before.pid);
  });

  it('reports a SIGKILLed environment as Runtime.ExitError and replaces it with a cold start', async () => {
    const fn = localFunction();
    const before = await identify(fn);
    const result = await fn.invoke({ action: 'sigkill' });
    expect(result).toMatchObject({ status: 'error', errorType: 'Runtime.ExitError' });
    expect(result.status === 'error' && result.message).toContain('signal SIGKILL');
    const after = await identify(fn);
    expect(after.pid).not.toBe(before.pid);
    expect(isRunning(before.pid)).toBe(false);
    expect(fn.stats).toMatchObject({ coldStarts: 2, exits: 1 });
  });

  it('kills an invocation that exceeds the function timeout, and never reuses that environment', async () => {
    const fn = localFunction({ timeoutMs: 500 });
    const before = await identify(fn);
    const result = await fn.invoke({ action: 'sleep', ms: 5000 });
    expect(result).toMatchObject({ status: 'error', errorType: 'Sandbox.Timedout' });
    const after = await identify(fn);
    expect(after.pid).not.toBe(before.pid);
    expect(fn.stats.timeouts).toBe(1);
  });

  it('fails to start an environment whose module scope throws, naming the error', async () => {
    await expect(ExecutionEnvironment.start(spec({ environment: { FAIL_INIT: '1' } }))).rejects.toThrow(
      InitError,
    );
    await expect(
      localFunction({ environment: { FAIL_INIT: '1' } }).invoke({ action: 'identify' }),
    ).rejects.toThrow(/init failed on purpose/);
  });

  it('stop() ends every environment process', async () => {
    const fn = localFunction();
    const [a, b] = await Promise.all([identify(fn), identify(fn)]);
    expect(a.pid).not.toBe(b.pid); // two concurrent invocations need two environments
    await fn.stop();
    expect(isRunning(a.pid)).toBe(false);
    expect(isRunning(b.pid)).toBe(false);
  });
  it('reports an injected kill as a Runtime.ExitError, counted apart, and replaces the environment', async () => {
    const fn = localFunction();
    const before = await identify(fn);
    // No successful invocation of the typical length yet: the kill lands within the first 20 ms.
    const result = await fn.invoke({ action: 'sleep', ms: 1000 }, { killAtFraction: 0.5 });
    expect(result).toMatchObject({ status: 'error', errorType: 'Runtime.ExitError', injectedKill: true });
    expect(result.status === 'error' && result.message).toContain('signal SIGKILL');
    expect(isRunning(before.pid)).toBe(false);
    expect((await identify(fn)).pid).not.toBe(before.pid);
    expect(fn.stats).toMatchObject({ exits: 1, injectedKills: 1, coldStarts: 2 });
  });

  it('counts a handler that kills itself as an exit but not as an injected kill', async () => {
    const fn = localFunction();
    await fn.invoke({ action: 'sigkill' });
    expect(fn.stats).toMatchObject({ exits: 1, injectedKills: 0 });
  });

  it('places an injected kill within the typical invocation: one that finishes first is untouched', async () => {
    const fn = localFunction();
    for (let index = 0; index < 3; index += 1) await fn.invoke({ action: 'sleep', ms: 300 });
    const before = await identify(fn);
    // 0.99 of a typical 300 ms invocation: identify is done long before.
    const result = await fn.invoke({ action: 'identify' }, { killAtFraction: 0.99 });
    expect(result.status).toBe('ok');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(isRunning(before.pid)).toBe(true);
    expect((await identify(fn)).pid).toBe(before.pid);
    expect(fn.stats.injectedKills).toBe(0);
  });

  it('spends an injected work delay in the environment before the handler, with the timeout extended by it', async () => {
    const fn = localFunction({ timeoutMs: 1000 });
    await identify(fn); // warm, so the delay is all that is measured
    const started = Date.now();
    const result = await fn.invoke({ action: 'identify' }, { workDelayMs: 1500 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(result.status).toBe('ok');
    // The handler still gets (nearly) its whole function timeout once the delay is over.
    expect(
      result.status === 'ok' && (result.response as { remainingMs: number }).remainingMs,
    ).toBeGreaterThan(500);
  });

  it('gives the init its own limit, as AWS does: the function timeout counts from the invoke', async () => {
    // An init longer than the function timeout still serves its first invocation…
    const slowInit = { bundlePath: RECORDING, environment: { INIT_DELAY_MS: '1500' } };
    const fn = localFunction({ ...slowInit, timeoutMs: 1000 });
    const cold = await fn.invoke({});
    expect(cold.status).toBe('ok');
    // …with the whole function timeout left to it, like every warm invocation after it.
    const { remainingMs } = (cold.status === 'ok' ? cold.response : {}) as { remainingMs: number };
    expect(remainingMs).toBeGreaterThan(500);
    expect(fn.stats).toMatchObject({ coldStarts: 1, timeouts: 0 });
    expect(fn.stats.slowestInitMs).toBeGreaterThanOrEqual(1500);
  });

  it('initialises environments ahead of the first invocation (prewarm), which then runs warm', async () => {
    const fn = localFunction({ bundlePath: RECORDING, environment: { INIT_DELAY_MS: '300' } });
    await fn.prewarm(3);
    expect(fn.stats).toMatchObject({ prewarmed: 3, coldStarts: 0 });
    const results = await Promise.all(Array.from({ length: 3 }, () => fn.invoke({})));
    const pids = results.map((result) =>
      result.status === 'ok' ? (result.response as { pid: number }).pid : 0,
    );
    expect(new Set(pids).size).toBe(3);
    // Three at once were served by the three warm environments; a fourth at once cold-starts.
    expect(fn.stats).toMatchObject({ prewarmed: 3, coldStarts: 0, invocations: 3 });
    await Promise.all(Array.from({ length: 4 }, () => fn.invoke({})));
    expect(fn.stats.coldStarts).toBe(1);
  });

  it('fails a prewarm whose handler cannot initialise with the handler’s error', async () => {
    const fn = localFunction({ environment: { FAIL_INIT: '1' } });
    await expect(fn.prewarm(2)).rejects.toThrow(/failed to initialise: .*init failed on purpose/);
    expect(fn.stats.prewarmed).toBe(0);
  });

  it('forwards the logs of many environments into one slow sink without piling listeners on it', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      highWaterMark: 8, // full after every write: the backpressure path is taken
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        setTimeout(done, 1);
      },
    });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const fn = localFunction({
        bundlePath: RECORDING,
        logSink: sink,
        environment: { BATCH_DELAY_MS: '500' },
      });
      const results = await Promise.all(Array.from({ length: 12 }, () => fn.invoke({})));
      expect(fn.stats.coldStarts).toBe(12);
      expect(sink.listenerCount('error')).toBe(0);
      expect(sink.listenerCount('drain')).toBeLessThanOrEqual(1);
      await fn.stop();
      const pids = results.map((result) =>
        result.status === 'ok' ? (result.response as { pid: number }).pid : 0,
      );
      const logged = lines.join('');
      for (const pid of pids) expect(logged).toContain(`invoked in ${pid}`);
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

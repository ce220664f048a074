import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Bundles, bundleHandlers } from '../../harness/bundle.js';
import {
  ExecutionEnvironment,
  type FunctionSpec,
  InitError,
} from '../../harness/lambda-runtime/execution-environment.js';
import { LocalFunction } from '../../harness/lambda-runtime/local-function.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/scripted-handler.mjs', import.meta.url));

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
});

/**
 * The local runtime's timing defaults, in one place: what the embedded run uses unless told
 * otherwise. Pure, so the CLI can print them without starting anything.
 */

/**
 * Batches in flight per mode locally, unless --concurrency says otherwise: AWS's minimum maximum
 * concurrency, not the topology's 5. On AWS every request of a batch takes a few milliseconds
 * whatever the concurrency; here one DynamoDB Local on two cores serves every mode, so 20 callers
 * queue at it and the slowest batch of 10 takes 2.5 s instead of 1.0–1.4 s at 8 callers (measured,
 * seed d3) — for about the same total throughput, since the two cores are the bottleneck either
 * way. Short invocations are what allow a short visibility timeout, and so short crash rounds.
 */
export const LOCAL_MAX_CONCURRENCY = 2;

/** The shortest local function timeout: 1.4–2 × the slowest invocation of a default run (1.0–1.4 s). */
const MIN_LOCAL_FUNCTION_TIMEOUT_SECONDS = 2;

/**
 * The visibility timeout's clock starts at the receive, the function timeout's at the invocation:
 * between them comes a replacement environment's cold start (the slowest measured 0.4 s at 2 in
 * flight per mode, 0.9 s at 5), after the invocation the delete. One second keeps a batch that
 * ends within its function timeout from outliving its messages' visibility. Without prewarm
 * (--cold-starts) every environment's first batch waits for an init, all of them at once: about a
 * third of a second each on two cores (9 at once took 1–3 s), added here.
 */
export function localReceiveMarginSeconds(environments: { prewarm: boolean; count: number }): number {
  return 1 + (environments.prewarm ? 0 : Math.ceil(environments.count / 3));
}

/** The shortest local visibility timeout: a default run's (batch 10, 2 in flight per mode, prewarmed). */
export const MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS =
  MIN_LOCAL_FUNCTION_TIMEOUT_SECONDS + localReceiveMarginSeconds({ prewarm: true, count: 0 });

/**
 * The local function timeout, with room over the slowest invocation. A batch's invocation is as
 * long as its records times the callers queueing at the one DynamoDB Local: every mode's batches
 * in flight. Measured on two cores (seed d3), the slowest invocation of a run is 1.0–1.4 s at batch
 * 10 with 8 callers (the default: 4 modes × 2) and 2.5 s with 20 (4 × 5); a redrive's 12 modes × 2
 * reached 3.1 s. So ⌈batch × callers / 40⌉ s, 2 at least.
 */
export function localFunctionTimeoutSeconds(batchSize: number, concurrency: number, modes: number): number {
  return Math.max(MIN_LOCAL_FUNCTION_TIMEOUT_SECONDS, Math.ceil((batchSize * concurrency * modes) / 40));
}

/**
 * The local visibility timeout when none is given: the function timeout, the batching window Lambda
 * uses above batch 10 (1 s), and the receive's margin. 3 s for a default run, so a crashed batch
 * is back 3 s after its receive. (AWS advises 6 × the function timeout, to leave room for invokes
 * throttled and retried within the visibility timeout; the local runtime never throttles one.)
 */
export function localVisibilityTimeoutSeconds(
  batchSize: number,
  concurrency: number,
  modes: number,
  prewarm = true,
): number {
  const batchingWindowSeconds = batchSize > 10 ? 1 : 0;
  return (
    localFunctionTimeoutSeconds(batchSize, concurrency, modes) +
    batchingWindowSeconds +
    localReceiveMarginSeconds({ prewarm, count: concurrency * modes })
  );
}

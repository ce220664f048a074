/**
 * The local runtime's timing defaults, in one place: what the embedded run uses unless told
 * otherwise. Pure, so the CLI can print them without starting anything.
 */

/**
 * Batches in flight per mode locally, unless --concurrency says otherwise: AWS's minimum maximum
 * concurrency, not the topology's 5. On AWS every request of a batch takes a few milliseconds
 * whatever the concurrency; here one DynamoDB Local on two cores serves every mode, so 20 callers
 * queue at it and a batch of 10 takes 3–5 s instead of 1–2 s at 8 callers (measured, seed d3) —
 * for about the same total throughput, since DynamoDB Local is the bottleneck either way. Short
 * invocations are what allow a short visibility timeout, and so short crash rounds.
 */
export const LOCAL_MAX_CONCURRENCY = 2;

/** The shortest local visibility timeout: a default run (batch 10, 2 in flight per mode). */
export const MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS = 5;

/**
 * The local visibility timeout when none is given. A batch's invocation is as long as its records
 * times the callers queueing at DynamoDB Local, which grow with the concurrency: measured on two
 * cores with four modes, the slowest invocation of a run is about 2 s at batch 10 × 2 in flight
 * per mode and 3.3–4.9 s at 10 × 5. The function timeout is 2 s (plus any batching window) less,
 * so this gives 3 s and 6 s: a margin over the slowest, and room for a replacement's cold start
 * before the messages could reappear.
 */
export function localVisibilityTimeoutSeconds(batchSize: number, concurrency: number): number {
  const batchingWindowSeconds = batchSize > 10 ? 1 : 0;
  return Math.max(
    MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS,
    Math.ceil((batchSize * concurrency) / 10) + 3 + batchingWindowSeconds,
  );
}

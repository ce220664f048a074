import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Mode } from '../../../contract/topology.js';

/**
 * Counts the SQS requests the harness's own client makes per mode — the producer's sends and the
 * local event source mapping's receives and deletes (a deployed mapping makes the same calls, on
 * the account's bill) — and the payload bytes they carry: SQS bills every 64 KB chunk of a
 * request's payload as one request. Queue-depth polls (GetQueueAttributes) are the harness's, not
 * the architecture's, and are left out. at-most-once deletes from its own code, in the function's
 * process: the cost model counts those from its invocations.
 */
export interface SqsOperationCounts {
  requests: number;
  /** Requests as billed: ⌈payload / 64 KB⌉ each, at least 1. */
  billedRequests: number;
  messages: number;
  /** Receives that returned no message. */
  empty: number;
}

export type SqsMeterStats = Partial<Record<Mode, Record<string, SqsOperationCounts>>>;

const CHUNK_BYTES = 64 * 1024;
const METERED = new Set([
  'SendMessageBatchCommand',
  'SendMessageCommand',
  'ReceiveMessageCommand',
  'DeleteMessageBatchCommand',
  'DeleteMessageCommand',
]);

export interface SqsMeter {
  readonly stats: SqsMeterStats;
  reset(): void;
}

export function meterSqs(sqs: SQSClient, queueUrl: (mode: Mode) => string, modes: readonly Mode[]): SqsMeter {
  const meter: SqsMeter & { stats: SqsMeterStats } = {
    stats: {},
    reset: () => {
      for (const key of Object.keys(meter.stats) as Mode[]) delete meter.stats[key];
    },
  };
  const modeOfUrl = new Map(modes.map((mode) => [queueUrl(mode), mode] as const));
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const operation = context.commandName ?? '';
      const input = args.input as { QueueUrl?: string; Entries?: { MessageBody?: string }[] };
      const mode = modeOfUrl.get(input.QueueUrl ?? '');
      if (!METERED.has(operation) || mode === undefined) return result;
      const output = result.output as { Messages?: { Body?: string }[] };
      const bodies =
        operation === 'ReceiveMessageCommand'
          ? (output.Messages ?? []).map((message) => message.Body ?? '')
          : (input.Entries ?? []).map((entry) => entry.MessageBody ?? '');
      const bytes = bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0);
      const name = operation.replace(/Command$/, '');
      const byOperation = meter.stats[mode] ?? {};
      meter.stats[mode] = byOperation;
      const counts = byOperation[name] ?? { requests: 0, billedRequests: 0, messages: 0, empty: 0 };
      byOperation[name] = counts;
      counts.requests += 1;
      if (operation === 'ReceiveMessageCommand' && bodies.length === 0) counts.empty += 1;
      counts.billedRequests += Math.max(1, Math.ceil(bytes / CHUNK_BYTES));
      counts.messages += operation.startsWith('Delete') ? (input.Entries?.length ?? 1) : bodies.length;
      return result;
    },
    { step: 'initialize', name: 'benchSqsMeter' },
  );
  return meter;
}

// A handler that records what it is handed, to test the local Lambda runtime and its SQS event
// source mapping from the outside. Each invocation appends one JSON line to RECORD_FILE (if set):
// the process, when it started and ended, and the records (id, receive count, receipt handle).
import { appendFileSync } from 'node:fs';

// Module scope runs once per execution environment: INIT_DELAY_MS stands for a slow cold start.
const initDelayMs = Number(process.env.INIT_DELAY_MS ?? 0);
if (initDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, initDelayMs));

export const handler = async (event, context) => {
  const startedAt = Date.now();
  console.log(`invoked in ${process.pid}`);
  const remainingMs = context.getRemainingTimeInMillis();
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.BATCH_DELAY_MS ?? 0)));
  const records = (event.Records ?? []).map((record) => ({
    messageId: record.messageId,
    receiveCount: Number(record.attributes.ApproximateReceiveCount),
    receiptHandle: record.receiptHandle,
    body: record.body,
  }));
  if (process.env.RECORD_FILE) {
    const line = { pid: process.pid, startedAt, endedAt: Date.now(), records };
    appendFileSync(process.env.RECORD_FILE, `${JSON.stringify(line)}\n`);
  }
  if (process.env.RESPONSE === 'array') return [];
  return { pid: process.pid, remainingMs, batchItemFailures: [] };
};

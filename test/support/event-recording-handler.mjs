// A handler that writes down every event it is handed, whole, to test what the local SQS event
// source mapping delivers from the handler's side (after the trip to the worker process). Each
// invocation appends the event as one JSON line to EVENT_FILE, and succeeds.
import { appendFileSync } from 'node:fs';

export const handler = async (event) => {
  if (process.env.EVENT_FILE) appendFileSync(process.env.EVENT_FILE, `${JSON.stringify(event)}\n`);
  return { batchItemFailures: [] };
};

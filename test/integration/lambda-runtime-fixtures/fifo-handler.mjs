// A handler for FIFO event source tests: it records what it is handed and fails the records whose
// body asks for it. Each invocation appends one JSON line to RECORD_FILE: when it started and ended,
// the records (the body's id, message group, sequence number, receive count), and what it failed.
//
// A record fails while its receive count is at most the body's `failReceives`. FAILURE says how the
// batch fails then:
// - `throw`: the invocation throws (a whole-batch failure, nothing deleted);
// - `fifo`: a partial batch response that reports the first failing record and every later one,
//   as AWS asks of a FIFO partial batch response (Powertools' SqsFifoPartialProcessor).
import { appendFileSync } from 'node:fs';

export const handler = async (event) => {
  const startedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.BATCH_DELAY_MS ?? 0)));
  const records = (event.Records ?? []).map((record) => {
    const body = JSON.parse(record.body);
    return {
      messageId: record.messageId,
      id: body.id,
      group: record.attributes.MessageGroupId,
      sequenceNumber: record.attributes.SequenceNumber,
      receiveCount: Number(record.attributes.ApproximateReceiveCount),
      fails: (body.failReceives ?? 0) >= Number(record.attributes.ApproximateReceiveCount),
    };
  });
  const first = records.findIndex((record) => record.fails);
  const threw = first >= 0 && process.env.FAILURE === 'throw';
  const failed = first < 0 ? [] : records.slice(first);
  const line = {
    startedAt,
    endedAt: Date.now(),
    records: records.map(({ fails, ...record }) => record),
    threw,
    failed: failed.map((record) => record.id),
  };
  appendFileSync(process.env.RECORD_FILE, `${JSON.stringify(line)}\n`);
  if (threw) throw new Error(`failed on purpose at ${records[first].id}`);
  return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.messageId })) };
};

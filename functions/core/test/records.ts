import type { SQSEvent, SQSRecord } from 'aws-lambda';

let sequence = 0;

/** A record as the Lambda SQS event source delivers it. */
export function record(
  body: unknown,
  options: { readonly receiveCount?: number; readonly group?: string } = {},
): SQSRecord {
  sequence += 1;
  const messageId = `msg-${sequence}`;
  return {
    messageId,
    receiptHandle: `receipt-${messageId}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: String(options.receiveCount ?? 1),
      SentTimestamp: '1767225600000',
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: '1767225600001',
      ...(options.group !== undefined ? { MessageGroupId: options.group } : {}),
    },
    messageAttributes: {},
    md5OfBody: 'not-checked',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:eu-west-1:123456789012:orders${options.group !== undefined ? '.fifo' : ''}`,
    awsRegion: 'eu-west-1',
  };
}

export const batch = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

export const NOW = Date.UTC(2026, 0, 1);

/** A logger that keeps its lines, so a test can read what a team would alarm on. */
export function memoryLogger() {
  const lines: { level: string; message: string; attributes: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, attributes: Record<string, unknown>) =>
    void lines.push({ level, message, attributes });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

import type { SQSEvent, SQSRecord } from 'aws-lambda';

export interface SqsRecordOptions {
  /** `attributes.ApproximateReceiveCount`: above 1 for a redelivery. @default 1 */
  readonly receiveCount?: number;
  /** A FIFO record: `attributes.MessageGroupId`, and an event source ARN ending in `.fifo`. */
  readonly group?: string;
  /** @default `msg-<n>`, a new one per record (a producer's re-send has a new one too) */
  readonly messageId?: string;
  /** @default `arn:aws:sqs:eu-west-1:123456789012:orders` (`.fifo` added for a group) */
  readonly queueArn?: string;
  readonly messageAttributes?: SQSRecord['messageAttributes'];
}

let sequence = 0;

/**
 * A record as Lambda's SQS event source mapping delivers it. `body` is sent as it is when a string,
 * as JSON otherwise.
 *
 * @example
 * ```ts
 * const first = sqsRecord({ eventId: 'e-1', createdAt: new Date().toISOString(), sku: 'A', quantity: 2 });
 * await handler(sqsEvent(first));
 * // The same message again, as SQS redelivers it:
 * await handler(sqsEvent({ ...first, attributes: { ...first.attributes, ApproximateReceiveCount: '2' } }));
 * ```
 */
export function sqsRecord(body: unknown, options: SqsRecordOptions = {}): SQSRecord {
  sequence += 1;
  const messageId = options.messageId ?? `msg-${sequence}`;
  const arn = options.queueArn ?? 'arn:aws:sqs:eu-west-1:123456789012:orders';
  return {
    messageId,
    receiptHandle: `receipt-${messageId}-${sequence}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: String(options.receiveCount ?? 1),
      SentTimestamp: '1767225600000',
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: '1767225600001',
      ...(options.group !== undefined ? { MessageGroupId: options.group } : {}),
    },
    messageAttributes: options.messageAttributes ?? {},
    md5OfBody: 'not-checked',
    eventSource: 'aws:sqs',
    eventSourceARN: options.group !== undefined && !arn.endsWith('.fifo') ? `${arn}.fifo` : arn,
    awsRegion: arn.split(':')[3] ?? 'eu-west-1',
  };
}

/** The event a handler is invoked with: these records, in this order, as one batch. */
export const sqsEvent = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

/** The same record delivered again (a crash before the acknowledgement, a visibility timeout). */
export const redelivered = (record: SQSRecord): SQSRecord => ({
  ...record,
  receiptHandle: `${record.receiptHandle}-again`,
  attributes: {
    ...record.attributes,
    ApproximateReceiveCount: String(Number(record.attributes.ApproximateReceiveCount) + 1),
  },
});

/** The same body sent again by the producer: SQS gives it a new message id. */
export const resent = (record: SQSRecord): SQSRecord => ({
  ...sqsRecord(record.body, {
    queueArn: record.eventSourceARN,
    ...(record.attributes.MessageGroupId !== undefined ? { group: record.attributes.MessageGroupId } : {}),
  }),
  messageAttributes: record.messageAttributes,
});

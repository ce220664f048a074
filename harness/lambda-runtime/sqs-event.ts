import type { Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';

/** Builds the SQSEvent record exactly as Lambda's SQS event source mapping delivers it. */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: required(message.MessageId, 'MessageId'),
    receiptHandle: required(message.ReceiptHandle, 'ReceiptHandle'),
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? '000000000000',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: toLambdaAttributes(message.MessageAttributes ?? {}),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

function toLambdaAttributes(attributes: NonNullable<Message['MessageAttributes']>): SQSMessageAttributes {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => [
      name,
      {
        dataType: value.DataType ?? 'String',
        stringListValues: [],
        binaryListValues: [],
        ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
        ...(value.BinaryValue !== undefined
          ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }
          : {}),
      },
    ]),
  );
}

function required(value: string | undefined, name: string): string {
  if (value === undefined) throw new Error(`SQS returned a message without ${name}`);
  return value;
}

export function toSqsEvent(records: SQSRecord[]): SQSEvent {
  return { Records: records };
}

/**
 * Which records Lambda deletes after a successful invocation (AWS: "Handling errors for an SQS
 * event source"): without ReportBatchItemFailures, all of them. With it, all but the listed ones;
 * an empty or absent list is full success; a response that lists an empty, null or unknown
 * itemIdentifier, or is not a batch response at all, fails the whole batch (nothing deleted).
 */
export function recordsToDelete(
  records: readonly SQSRecord[],
  response: unknown,
  reportBatchItemFailures: boolean,
): { readonly delete: SQSRecord[]; readonly failedWholeBatch: boolean } {
  if (!reportBatchItemFailures) return { delete: [...records], failedWholeBatch: false };
  if (response === null || response === undefined) return { delete: [...records], failedWholeBatch: false };
  if (typeof response !== 'object') return { delete: [], failedWholeBatch: true };
  const failures = (response as Partial<SQSBatchResponse>).batchItemFailures;
  if (failures === undefined || failures === null) return { delete: [...records], failedWholeBatch: false };
  if (!Array.isArray(failures)) return { delete: [], failedWholeBatch: true };
  const ids = new Set(records.map((record) => record.messageId));
  const failed = new Set<string>();
  for (const failure of failures as unknown[]) {
    const id =
      typeof failure === 'object' && failure !== null && 'itemIdentifier' in failure
        ? failure.itemIdentifier
        : undefined;
    if (typeof id !== 'string' || id === '' || !ids.has(id)) return { delete: [], failedWholeBatch: true };
    failed.add(id);
  }
  return { delete: records.filter((record) => !failed.has(record.messageId)), failedWholeBatch: false };
}

import type { Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { recordAttribution } from '../../functions/shared/message.js';

/**
 * Builds the SQSEvent record exactly as Lambda's SQS event source mapping delivers it. The system
 * attributes must have been asked for (MessageSystemAttributeNames ['All']): a default would hide
 * a receive that forgot them, and the handlers' crash draws depend on the receive count.
 */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: required(message.MessageId, 'MessageId'),
    receiptHandle: required(message.ReceiptHandle, 'ReceiptHandle'),
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: required(attributes.ApproximateReceiveCount, 'ApproximateReceiveCount'),
      SentTimestamp: required(attributes.SentTimestamp, 'SentTimestamp'),
      SenderId: required(attributes.SenderId, 'SenderId'),
      ApproximateFirstReceiveTimestamp: required(
        attributes.ApproximateFirstReceiveTimestamp,
        'ApproximateFirstReceiveTimestamp',
      ),
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
 * What fault draws are keyed on: the event the record names (the producer's eventId attribute,
 * which even a malformed body carries, else the body's), so every mode — whose SQS message ids
 * differ — gets the same schedule; the message id only when nothing names an event.
 */
export function faultKeyOf(record: SQSRecord): string {
  return recordAttribution(record).eventId ?? record.messageId;
}

export { receiveCountOf } from '../../functions/shared/message.js';

/**
 * Which records Lambda deletes after a successful invocation (AWS: "Handling errors for an SQS
 * event source"): without ReportBatchItemFailures, all of them. With it, all but the listed ones;
 * an empty or absent list is full success; a response that lists an empty, null or unknown
 * itemIdentifier, or is not a batch response at all (not an object, or an array), fails the whole batch (nothing deleted).
 */
export function recordsToDelete(
  records: readonly SQSRecord[],
  response: unknown,
  reportBatchItemFailures: boolean,
): { readonly delete: SQSRecord[]; readonly failedWholeBatch: boolean } {
  if (!reportBatchItemFailures) return { delete: [...records], failedWholeBatch: false };
  if (response === null || response === undefined) return { delete: [...records], failedWholeBatch: false };
  // Lambda reads the response as a JSON object; a string, a number or a top-level array is not one.
  if (typeof response !== 'object' || Array.isArray(response)) return { delete: [], failedWholeBatch: true };
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

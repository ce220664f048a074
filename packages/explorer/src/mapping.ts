import type { Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

/**
 * What Lambda's SQS event source mapping does with a message and with a handler's answer: the
 * record it delivers, and which records it deletes. The explorer's drain and the lab's local
 * mapping both use these.
 */

/**
 * Builds the SQSEvent record as Lambda's SQS event source mapping delivers it: every field of the
 * standard-queue record AWS documents ("Using Lambda with Amazon SQS", example standard queue
 * message event: https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html), plus
 * md5OfMessageAttributes, which the records Lambda delivers carry when the message has attributes
 * (recorded events; @types/aws-lambda's SQSRecord). Every field is read from what SQS returned,
 * never defaulted: the receive must ask for all system and message attributes
 * (MessageSystemAttributeNames and MessageAttributeNames ['All']), and a default would hide one that
 * forgot them (the handlers' crash draws depend on the receive count; their attribution on the
 * message attributes).
 */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const messageAttributes = message.MessageAttributes ?? {};
  const hasMessageAttributes = Object.keys(messageAttributes).length > 0;
  return {
    messageId: required(message.MessageId, 'MessageId'),
    receiptHandle: required(message.ReceiptHandle, 'ReceiptHandle'),
    body: required(message.Body, 'Body'),
    attributes: toRecordAttributes(message.Attributes ?? {}),
    messageAttributes: toLambdaAttributes(messageAttributes),
    // SQS returns the digest only for a message with attributes, and so does Lambda. (Without
    // attributes, Lambda leaves it out, or sets it to null when the mapping has a batching window:
    // aws-powertools/powertools-lambda-typescript#4631. Left out here: the documented sample.)
    ...(hasMessageAttributes
      ? { md5OfMessageAttributes: required(message.MD5OfMessageAttributes, 'MD5OfMessageAttributes') }
      : {}),
    md5OfBody: required(message.MD5OfBody, 'MD5OfBody'),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

/**
 * System attributes SQS returns only for some messages, which Lambda passes on when they are there:
 * AWSTraceHeader (a sender traced by X-Ray), MessageGroupId (FIFO queues, and standard queues'
 * fair-queue tenants), SequenceNumber and MessageDeduplicationId (FIFO queues only),
 * DeadLetterQueueSourceArn (a message moved to a dead-letter queue). This project's producer sends
 * its messages untraced; only a FIFO mode's carry the three FIFO ones, and no mapping reads a
 * dead-letter queue.
 */
const OPTIONAL_SYSTEM_ATTRIBUTES = [
  'AWSTraceHeader',
  'SequenceNumber',
  'MessageGroupId',
  'MessageDeduplicationId',
  'DeadLetterQueueSourceArn',
] as const;

function toRecordAttributes(attributes: NonNullable<Message['Attributes']>): SQSRecordAttributes {
  const optional: Partial<SQSRecordAttributes> = {};
  for (const name of OPTIONAL_SYSTEM_ATTRIBUTES) {
    const value = attributes[name];
    if (value !== undefined) optional[name] = value;
  }
  return {
    ApproximateReceiveCount: required(attributes.ApproximateReceiveCount, 'ApproximateReceiveCount'),
    SentTimestamp: required(attributes.SentTimestamp, 'SentTimestamp'),
    SenderId: required(attributes.SenderId, 'SenderId'),
    ApproximateFirstReceiveTimestamp: required(
      attributes.ApproximateFirstReceiveTimestamp,
      'ApproximateFirstReceiveTimestamp',
    ),
    ...optional,
  };
}

/**
 * Lambda's camelCase attribute values: stringValue for String and Number attributes, binaryValue
 * (base64) for Binary ones, and the list values SQS reserves for future use, always empty.
 */
function toLambdaAttributes(attributes: NonNullable<Message['MessageAttributes']>): SQSMessageAttributes {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => [
      name,
      {
        ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
        ...(value.BinaryValue !== undefined
          ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }
          : {}),
        stringListValues: [],
        binaryListValues: [],
        dataType: required(value.DataType, `the DataType of message attribute ${name}`),
      },
    ]),
  );
}

function required(value: string | undefined, name: string): string {
  if (value === undefined) throw new Error(`SQS returned a message without ${name}`);
  return value;
}

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

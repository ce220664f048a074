import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { ScenarioEvent } from './scenario.js';

export interface CellQueues {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly deadLetterQueueUrl: string;
}

/**
 * A cell's queue and its DLQ: SQS moves a message to the DLQ at its receive past `maxReceiveCount`.
 * The explorer makes what was not deleted visible again itself (after the invocation's deadline),
 * so the queue's own visibility timeout only has to outlast a delivery round. A FIFO queue as a
 * producer with explicit deduplication ids uses one, throttled per message group.
 */
export async function createCellQueues(
  sqs: SQSClient,
  name: string,
  settings: { readonly fifo: boolean; readonly maxReceiveCount: number },
): Promise<CellQueues> {
  const suffix = settings.fifo ? '.fifo' : '';
  const fifo = settings.fifo
    ? {
        FifoQueue: 'true',
        ContentBasedDeduplication: 'false',
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
      }
    : {};
  const dlq = await sqs.send(
    new CreateQueueCommand({ QueueName: `${name}-dlq${suffix}`, Attributes: { ...fifo } }),
  );
  const deadLetterQueueUrl = required(dlq.QueueUrl, 'the DLQ URL');
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}${suffix}`,
      Attributes: {
        ...fifo,
        VisibilityTimeout: '300',
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: await queueArn(sqs, deadLetterQueueUrl),
          maxReceiveCount: settings.maxReceiveCount,
        }),
      },
    }),
  );
  const queueUrl = required(queue.QueueUrl, 'the queue URL');
  return { queueUrl, queueArn: await queueArn(sqs, queueUrl), deadLetterQueueUrl };
}

async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  return required(Attributes?.QueueArn, `the ARN of ${queueUrl}`);
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`SQS returned no ${what}`);
  return value;
}

/** Sends the events in order, 10 at a time; each message's id → the event's position. */
export async function sendEvents(
  sqs: SQSClient,
  queueUrl: string,
  events: readonly ScenarioEvent[],
  fifo: boolean,
): Promise<Map<string, number>> {
  const positions = new Map<string, number>();
  for (let start = 0; start < events.length; start += 10) {
    const entries: SendMessageBatchRequestEntry[] = events.slice(start, start + 10).map((event, index) => ({
      Id: String(start + index),
      MessageBody: typeof event.body === 'string' ? event.body : JSON.stringify(event.body),
      ...(event.attributes
        ? {
            MessageAttributes: Object.fromEntries(
              Object.entries(event.attributes).map(([name, value]) => [
                name,
                { DataType: 'String', StringValue: value },
              ]),
            ),
          }
        : {}),
      ...(fifo
        ? {
            MessageGroupId: event.groupId ?? event.id,
            MessageDeduplicationId: event.deduplicationId ?? event.id,
          }
        : {}),
    }));
    const { Successful = [], Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
    );
    if (Failed.length > 0) {
      throw new Error(
        `SQS refused events: ${Failed.map((entry) => `${events[Number(entry.Id)]?.id}: ${entry.Message}`).join('; ')}`,
      );
    }
    for (const entry of Successful) if (entry.MessageId) positions.set(entry.MessageId, Number(entry.Id));
  }
  return positions;
}

/** Every visible message: what one round of the mapping's polling finds. */
export async function receiveAll(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return messages;
    messages.push(...Messages);
  }
}

/** The mapping's delete of what the answer says: the records SQS deleted (an entry can fail in a 200). */
export async function deleteRecords(
  sqs: SQSClient,
  queueUrl: string,
  records: readonly SQSRecord[],
): Promise<SQSRecord[]> {
  const deleted: SQSRecord[] = [];
  for (let start = 0; start < records.length; start += 10) {
    const chunk = records.slice(start, start + 10);
    const { Failed = [] } = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
      }),
    );
    const failed = new Set(Failed.map((entry) => entry.Id));
    deleted.push(...chunk.filter((_, index) => !failed.has(String(index))));
  }
  return deleted;
}

/** What the visibility timeout's end does: the records are visible again. */
export async function releaseAll(
  sqs: SQSClient,
  queueUrl: string,
  records: readonly Pick<SQSRecord, 'receiptHandle'>[],
): Promise<void> {
  for (let start = 0; start < records.length; start += 10) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: records.slice(start, start + 10).map((record, index) => ({
          Id: String(index),
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: 0,
        })),
      }),
    );
  }
}

/**
 * Moving a DLQ's messages back to their source queue (docs/redrive.md): by copy on the emulator,
 * which has no message move task, and with SQS's own StartMessageMoveTask on a deployed stack.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { sizedBatches } from '../../contract/chunks.js';
import { parseRedriveCount, REDRIVE_COUNT_ATTRIBUTE } from '../../contract/message.js';
import { STORAGE } from '../../contract/topology.js';
import { DeployedEnvironmentError } from './deployed-errors.js';

/** The attributes of the copy a redrive sends: the message's own, with its redrive count one higher. */
export function redrivenAttributes(message: Message): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    attributes[name] = {
      DataType: value.DataType,
      ...(value.StringValue !== undefined ? { StringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { BinaryValue: value.BinaryValue } : {}),
    };
  }
  const previous = message.MessageAttributes?.[REDRIVE_COUNT_ATTRIBUTE];
  const count = parseRedriveCount(
    previous && { dataType: previous.DataType, stringValue: previous.StringValue },
    message.MessageId,
  );
  attributes[REDRIVE_COUNT_ATTRIBUTE] = { DataType: 'String', StringValue: String(count + 1) };
  return attributes;
}

/**
 * A redrive by copy, as SQS's move task does it: receive from the DLQ, send each message to the
 * source with the same body and attributes (SQS gives it a new MessageId, and its receive count
 * starts over), and delete it from the DLQ only once its send succeeded. A harness killed between
 * the two leaves the message in both queues (a copy the consumers' dedupe absorbs), never in neither.
 * Unlike SQS, it adds a redriveCount attribute, so the copy's crash and fault draws differ.
 * It moves at most what the DLQ held when it started, so a copy that fails again and comes back
 * during the move is not moved twice. Returns how many messages were moved; a send SQS refuses is
 * an error (the message stays in the DLQ).
 */
export async function redriveByCopy(
  sqs: SQSClient,
  deadLetterQueueUrl: string,
  sourceQueueUrl: string,
  options: { readonly maxBatchBytes?: number } = {},
): Promise<number> {
  const maxBatchBytes = options.maxBatchBytes ?? STORAGE.maxMessageBytes;
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: deadLetterQueueUrl,
      AttributeNames: ['ApproximateNumberOfMessages'],
    }),
  );
  const held = Number(Attributes?.ApproximateNumberOfMessages ?? 0);
  let moved = 0;
  // The emulator keeps one copy of a queue: a short poll that returns nothing means empty. Twice, to be sure.
  for (let empty = 0; empty < 2 && moved < held; ) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetterQueueUrl,
        MaxNumberOfMessages: Math.min(10, held - moved),
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId'],
      }),
    );
    if (Messages.length === 0) {
      empty += 1;
      continue;
    }
    empty = 0;
    // One SendMessageBatch carries at most SQS's maximum payload in all: near-limit bodies go alone.
    for (const group of sizedBatches(Messages.map(copyOf), copyBytes, maxBatchBytes)) {
      moved += await moveBatch(sqs, deadLetterQueueUrl, sourceQueueUrl, group);
    }
  }
  return moved;
}

/** Sends one batch back to the source, then deletes from the DLQ what was sent. */
async function moveBatch(
  sqs: SQSClient,
  deadLetterQueueUrl: string,
  sourceQueueUrl: string,
  copies: readonly Copy[],
): Promise<number> {
  const messages = copies.map((copy) => copy.message);
  const fifo = sourceQueueUrl.endsWith('.fifo');
  const entries = copies.map(({ message, attributes }, index) => ({
    Id: String(index),
    MessageBody: required(message.Body, 'Body', message),
    MessageAttributes: attributes,
    // A FIFO copy keeps its group, so the group's order holds. Its deduplication id is the DLQ
    // message's id, new at every move: the event id would make SQS drop a copy sent within five
    // minutes of the original.
    ...(fifo
      ? {
          MessageGroupId: required(message.Attributes?.MessageGroupId, 'MessageGroupId', message),
          MessageDeduplicationId: required(message.MessageId, 'MessageId', message),
        }
      : {}),
  }));
  const sent = await sqs.send(new SendMessageBatchCommand({ QueueUrl: sourceQueueUrl, Entries: entries }));
  const succeeded = (sent.Successful ?? []).map((entry) => Number(entry.Id));
  if (succeeded.length > 0) {
    const deleted = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: deadLetterQueueUrl,
        Entries: succeeded.map((index) => ({
          Id: String(index),
          ReceiptHandle: required(messages[index]?.ReceiptHandle, 'ReceiptHandle', messages[index]),
        })),
      }),
    );
    const notDeleted = deleted.Failed ?? [];
    if (notDeleted.length > 0) {
      throw new Error(
        `redrive: ${notDeleted.length} message(s) were sent back to ${sourceQueueUrl} but not deleted from ` +
          `${deadLetterQueueUrl} (${notDeleted.map((entry) => entry.Code ?? entry.Message).join(', ')}): they are in both`,
      );
    }
  }
  const failed = sent.Failed ?? [];
  if (failed.length > 0) {
    throw new Error(
      `redrive: SQS refused to send ${failed.length} message(s) back to ${sourceQueueUrl} ` +
        `(${failed.map((entry) => `${entry.Code}: ${entry.Message}`).join('; ')}); they stay in ${deadLetterQueueUrl}`,
    );
  }
  return succeeded.length;
}

/** A DLQ message and the attributes its copy is sent with, built once: sized, then sent. */
interface Copy {
  readonly message: Message;
  readonly attributes: Record<string, MessageAttributeValue>;
}

const copyOf = (message: Message): Copy => ({ message, attributes: redrivenAttributes(message) });

/** What SQS counts toward a message's size: the body, and each attribute's name, type and value. */
export function messageBytes(message: Message): number {
  return copyBytes(copyOf(message));
}

function copyBytes({ message, attributes }: Copy): number {
  let bytes = Buffer.byteLength(message.Body ?? '');
  for (const [name, value] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
    bytes +=
      value.StringValue !== undefined
        ? Buffer.byteLength(value.StringValue)
        : (value.BinaryValue?.length ?? 0);
  }
  return bytes;
}

/** Groups of at most 10 messages within `maxBytes` in all (a message alone may reach it). */
export const bySize = (messages: readonly Message[], maxBytes: number): Message[][] =>
  sizedBatches(messages.map(copyOf), copyBytes, maxBytes).map((group) => group.map((copy) => copy.message));

function required(value: string | undefined, what: string, message: Message | undefined): string {
  if (value === undefined)
    throw new Error(`redrive: SQS returned a message without ${what} (${message?.MessageId})`);
  return value;
}

/** A message move task that ended without moving everything: FAILED or CANCELLED, with SQS's reason. */
export class MessageMoveTaskError extends DeployedEnvironmentError {
  override readonly name = 'MessageMoveTaskError';
}

export interface MoveTaskOptions {
  /** How often to ask ListMessageMoveTasks. @default 2000 */
  readonly pollMs?: number;
  /** Give up when the moved count has not changed for this long. @default 300000 */
  readonly stallMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * SQS's own DLQ redrive: StartMessageMoveTask with the DLQ as source and no destination (back to
 * each message's original source queue), polled with ListMessageMoveTasks until it is COMPLETED.
 * FAILED or CANCELLED is a MessageMoveTaskError naming SQS's reason. Returns the messages moved.
 */
export async function redriveWithMoveTask(
  sqs: SQSClient,
  deadLetterQueueArn: string,
  options: MoveTaskOptions = {},
): Promise<number> {
  const pollMs = options.pollMs ?? 2000;
  const stallMs = options.stallMs ?? 300_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const startedAt = Date.now();
  const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetterQueueArn }));
  let lastMoved = -1;
  let lastChange = Date.now();
  for (;;) {
    await sleep(pollMs);
    const { Results = [] } = await sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: deadLetterQueueArn, MaxResults: 1 }),
    );
    // The most recent task first: ours (only one task can be active per source queue).
    const task = Results[0];
    if (task === undefined) {
      throw new MessageMoveTaskError(
        `the move task ${TaskHandle ?? ''} of ${deadLetterQueueArn} is not listed`,
      );
    }
    // A listing that still shows an earlier task (finished before ours started; only a RUNNING
    // task has a handle) is not an answer yet. A minute allows for the clocks' skew.
    const earlier =
      (task.TaskHandle !== undefined && task.TaskHandle !== TaskHandle) ||
      (task.StartedTimestamp !== undefined && task.StartedTimestamp < startedAt - 60_000);
    if (earlier) {
      if (Date.now() - lastChange > stallMs) {
        throw new MessageMoveTaskError(
          `the move task ${TaskHandle ?? ''} of ${deadLetterQueueArn} is still not listed after ${Math.round(stallMs / 1000)} s`,
        );
      }
      continue;
    }
    const moved = task.ApproximateNumberOfMessagesMoved ?? 0;
    switch (task.Status) {
      case 'COMPLETED':
        return moved;
      case 'FAILED':
      case 'CANCELLED':
        throw new MessageMoveTaskError(
          `the redrive of ${deadLetterQueueArn} ended ${task.Status} after moving ${moved} of ` +
            `${task.ApproximateNumberOfMessagesToMove ?? '?'} messages: ${task.FailureReason ?? 'no reason given'}`,
        );
      default:
        if (moved !== lastMoved) {
          lastMoved = moved;
          lastChange = Date.now();
        } else if (Date.now() - lastChange > stallMs) {
          throw new MessageMoveTaskError(
            `the redrive of ${deadLetterQueueArn} is ${task.Status} but moved nothing for ${Math.round(stallMs / 1000)} s`,
          );
        }
    }
  }
}

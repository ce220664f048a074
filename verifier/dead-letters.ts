import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { chunks } from '../contract/chunks.js';
import { attributionOf, EVENT_ID_ATTRIBUTE, payloadHash, RUN_ID_ATTRIBUTE } from '../contract/message.js';

export interface DeadLetterSweep {
  /**
   * The run's messages in the DLQ that name their event (by attribute or body): event id → the
   * payload hashes of its copies whose body is a valid event (none for poison).
   */
  readonly events: Map<string, Set<string>>;
  /** The run's messages in the DLQ that name no event at all. */
  readonly unreadable: number;
  /** Messages the sweep could not make visible again (they reappear after their visibility timeout). */
  readonly notReleased: number;
  /** Every message the sweep received, of any run: on a FIFO DLQ, not all the queue holds. */
  readonly seen: number;
  /**
   * Per message group of the run's messages (a FIFO DLQ; a standard queue's messages have none
   * unless their producer names one), the greatest event id the sweep saw in it. SQS hides a
   * group's later messages while its first ones are in flight, so the sweep saw only the head of
   * each group: whatever else of it the DLQ holds comes after that event.
   */
  readonly lastEventOfGroup: ReadonlyMap<string, string>;
}

/**
 * Finds one run's messages in a dead-letter queue without consuming them.
 *
 * SQS has no read-only "peek": the sweep receives every message, hiding each for longer than the
 * sweep can last, until a receive comes back empty (or three in a row bring nothing unseen); then
 * it makes every received message visible again and never deletes one. The queue is
 * left as found, so a second verification sees the same messages. Two sweeps at the same time hide
 * messages from each other: verify one run at a time.
 */
export async function sweepDeadLetters(
  sqs: SQSClient,
  queueUrl: string,
  runId: string,
  options: { readonly visibilitySeconds: number; readonly waitTimeSeconds?: number },
): Promise<DeadLetterSweep> {
  const events = new Map<string, Set<string>>();
  const lastEventOfGroup = new Map<string, string>();
  // Message id → its latest receipt handle: SQS accepts only the newest one for a visibility change.
  const received = new Map<string, string>();
  let nothingNew = 0;
  let unreadable = 0;
  let notReleased = 0;
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          // Long polling asks every SQS server, so an empty answer means nothing is left to see.
          WaitTimeSeconds: options.waitTimeSeconds ?? 1,
          VisibilityTimeout: options.visibilitySeconds,
          MessageAttributeNames: [RUN_ID_ATTRIBUTE, EVENT_ID_ATTRIBUTE],
          MessageSystemAttributeNames: ['MessageGroupId'],
        }),
      );
      let fresh = 0;
      for (const message of Messages) {
        if (message.MessageId === undefined || message.ReceiptHandle === undefined) continue;
        const known = received.has(message.MessageId);
        received.set(message.MessageId, message.ReceiptHandle);
        if (known) continue;
        fresh += 1;
        const {
          runId: messageRunId,
          eventId,
          payload,
        } = attributionOf(
          message.Body,
          message.MessageAttributes?.[RUN_ID_ATTRIBUTE]?.StringValue,
          message.MessageAttributes?.[EVENT_ID_ATTRIBUTE]?.StringValue,
        );
        if (messageRunId !== runId) continue;
        if (eventId === undefined) {
          unreadable += 1;
          continue;
        }
        const hashes = events.get(eventId) ?? new Set<string>();
        if (payload) hashes.add(payloadHash(payload));
        events.set(eventId, hashes);
        const group = message.Attributes?.MessageGroupId;
        const last = group === undefined ? undefined : lastEventOfGroup.get(group);
        if (group !== undefined && (last === undefined || eventId > last))
          lastEventOfGroup.set(group, eventId);
      }
      // A long poll that comes back empty asked every SQS server: nothing is left to see. Only
      // messages already seen, three receives in a row: the sweep has wrapped around (a rare
      // duplicate delivery alone must not end it early).
      if (Messages.length === 0) break;
      nothingNew = fresh === 0 ? nothingNew + 1 : 0;
      if (nothingNew >= 3) break;
    }
  } finally {
    notReleased = await release(
      sqs,
      queueUrl,
      [...received].map(([id, receiptHandle]) => ({ id, receiptHandle })),
    );
  }
  return { events, unreadable, notReleased, seen: received.size, lastEventOfGroup };
}

/**
 * How many messages a queue holds, visible, in flight or delayed. On a FIFO DLQ, minus what a sweep
 * saw, it bounds what the sweep could not see behind a group's first batch. SQS's numbers are
 * approximate on AWS; the emulator's are exact.
 */
export async function countMessages(sqs: SQSClient, queueUrl: string): Promise<number> {
  const names = [
    'ApproximateNumberOfMessages',
    'ApproximateNumberOfMessagesNotVisible',
    'ApproximateNumberOfMessagesDelayed',
  ] as const;
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }),
  );
  return names.reduce((total, name) => total + Number(Attributes[name] ?? 0), 0);
}

/** Makes the received messages visible again; returns how many SQS did not release. */
async function release(
  sqs: SQSClient,
  queueUrl: string,
  messages: readonly { id: string; receiptHandle: string }[],
): Promise<number> {
  let failed = 0;
  for (const chunk of chunks(messages, 10)) {
    try {
      const result = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.receiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      );
      failed += result.Failed?.length ?? 0;
    } catch {
      // Keep releasing the other chunks; these come back when their visibility timeout ends.
      failed += chunk.length;
    }
  }
  return failed;
}

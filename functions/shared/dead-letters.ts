import {
  ChangeMessageVisibilityBatchCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { RUN_ID_ATTRIBUTE } from './message.js';

/**
 * Finds the event ids of one run's messages in a dead-letter queue without consuming them.
 *
 * SQS has no read-only "peek": the sweep receives every message with a visibility timeout long
 * enough to see each one once, then makes them visible again (never deletes them), so the queue
 * is left as it was found and a second verification sees the same messages.
 */
export async function deadLetteredEventIds(
  sqs: SQSClient,
  queueUrl: string,
  runId: string,
  options: { readonly sweepVisibilitySeconds?: number; readonly waitTimeSeconds?: number } = {},
): Promise<Set<string>> {
  const eventIds = new Set<string>();
  const seen = new Set<string>();
  const toRelease: { id: string; receiptHandle: string }[] = [];
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          // Long polling asks every SQS server, so an empty answer means the sweep is complete.
          WaitTimeSeconds: options.waitTimeSeconds ?? 1,
          VisibilityTimeout: options.sweepVisibilitySeconds ?? 60,
          MessageAttributeNames: [RUN_ID_ATTRIBUTE],
        }),
      );
      if (Messages.length === 0) break;
      for (const message of Messages) {
        if (message.MessageId === undefined || message.ReceiptHandle === undefined) continue;
        toRelease.push({ id: message.MessageId, receiptHandle: message.ReceiptHandle });
        if (seen.has(message.MessageId)) continue;
        seen.add(message.MessageId);
        const attributed = runIdAndEventId(
          message.Body,
          message.MessageAttributes?.[RUN_ID_ATTRIBUTE]?.StringValue,
        );
        if (attributed.runId === runId) eventIds.add(attributed.eventId ?? message.MessageId);
      }
    }
  } finally {
    await release(sqs, queueUrl, toRelease);
  }
  return eventIds;
}

function runIdAndEventId(body: string | undefined, runIdAttribute: string | undefined) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    parsed = undefined;
  }
  const field = (name: string): string | undefined =>
    typeof parsed === 'object' && parsed !== null && name in parsed
      ? String((parsed as Record<string, unknown>)[name])
      : undefined;
  return { runId: runIdAttribute ?? field('runId'), eventId: field('eventId') };
}

async function release(
  sqs: SQSClient,
  queueUrl: string,
  messages: readonly { id: string; receiptHandle: string }[],
): Promise<void> {
  for (let start = 0; start < messages.length; start += 10) {
    const chunk = messages.slice(start, start + 10);
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.receiptHandle,
          VisibilityTimeout: 0,
        })),
      }),
    );
  }
}

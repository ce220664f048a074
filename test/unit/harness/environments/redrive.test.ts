import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidRecordError } from '../../../../contract/errors.js';
import { explainRedriveError } from '../../../../harness/environments/deployed.js';
import { RedriveUnsupportedError } from '../../../../harness/environments/deployed-errors.js';
import {
  bySize,
  MessageMoveTaskError,
  messageBytes,
  redriveByCopy,
  redrivenAttributes,
  redriveWithMoveTask,
} from '../../../../harness/environments/redrive.js';

const sqs = mockClient(SQSClient);
const DLQ_ARN = 'arn:aws:sqs:eu-west-1:123456789012:effectively-once-dlq';
const fast = { pollMs: 0, sleep: async () => undefined };

beforeEach(() => sqs.reset());

/** The DLQ's depth when the redrive starts. */
const held = (messages: number) =>
  sqs
    .on(GetQueueAttributesCommand)
    .resolves({ Attributes: { ApproximateNumberOfMessages: String(messages) } });

describe('redrive with SQS’s message move task (aws, localstack)', () => {
  it('starts a task with the DLQ as source and no destination, and polls until COMPLETED', async () => {
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'h' });
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({ Results: [{ Status: 'RUNNING', ApproximateNumberOfMessagesMoved: 3 }] })
      .resolvesOnce({ Results: [{ Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 12 }] });

    await expect(redriveWithMoveTask(new SQSClient({}), DLQ_ARN, fast)).resolves.toBe(12);

    expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]?.args[0].input).toEqual({ SourceArn: DLQ_ARN });
    expect(sqs.commandCalls(ListMessageMoveTasksCommand)[0]?.args[0].input).toEqual({
      SourceArn: DLQ_ARN,
      MaxResults: 1,
    });
  });

  it.each(['FAILED', 'CANCELLED'])('is an error naming the reason when the task ends %s', async (status) => {
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'h' });
    sqs.on(ListMessageMoveTasksCommand).resolves({
      Results: [
        {
          Status: status,
          ApproximateNumberOfMessagesMoved: 2,
          ApproximateNumberOfMessagesToMove: 9,
          FailureReason: 'AWS.SimpleQueueService.NonExistentQueue',
        },
      ],
    });
    const moving = redriveWithMoveTask(new SQSClient({}), DLQ_ARN, fast);
    await expect(moving).rejects.toThrow(MessageMoveTaskError);
    await expect(moving).rejects.toThrow(
      new RegExp(`ended ${status} after moving 2 of 9 messages: AWS.SimpleQueueService.NonExistentQueue`),
    );
  });

  it('gives up when a running task moves nothing for the stall time', async () => {
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'h' });
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolves({ Results: [{ Status: 'RUNNING', ApproximateNumberOfMessagesMoved: 0 }] });
    await expect(
      redriveWithMoveTask(new SQSClient({}), DLQ_ARN, {
        ...fast,
        stallMs: 5,
        sleep: () => new Promise((resolve) => setTimeout(resolve, 3)),
      }),
    ).rejects.toThrow(/moved nothing for/);
  });

  it('waits past a listing that still shows an earlier, finished task', async () => {
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'ours' });
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({
        Results: [
          {
            Status: 'COMPLETED',
            StartedTimestamp: Date.now() - 3_600_000,
            ApproximateNumberOfMessagesMoved: 99,
          },
        ],
      })
      .resolves({
        Results: [{ Status: 'COMPLETED', StartedTimestamp: Date.now(), ApproximateNumberOfMessagesMoved: 3 }],
      });
    await expect(redriveWithMoveTask(new SQSClient({}), DLQ_ARN, fast)).resolves.toBe(3);
    expect(sqs.commandCalls(ListMessageMoveTasksCommand)).toHaveLength(2);
  });

  it('refuses plainly on an endpoint without the move task', () => {
    const unsupported = Object.assign(new Error('The action StartMessageMoveTask is not valid'), {
      name: 'InvalidAction',
    });
    const explained = explainRedriveError(unsupported, 'localstack', 'http://127.0.0.1:4566');
    expect(explained).toBeInstanceOf(RedriveUnsupportedError);
    expect((explained as Error).message).toMatch(
      /StartMessageMoveTask.*LocalStack at http:\/\/127\.0\.0\.1:4566/,
    );
    const other = new Error('boom');
    expect(explainRedriveError(other, 'aws')).toBe(other);
    // On AWS, UnsupportedOperation is StartMessageMoveTask's documented refusal of a request, not a missing call.
    const refused = Object.assign(new Error('Source queue must be configured as a Dead Letter Queue.'), {
      name: 'UnsupportedOperation',
    });
    expect(explainRedriveError(refused, 'aws')).toBe(refused);
  });
});

describe('redrive by copy (embedded)', () => {
  const message = (id: string, redriveCount?: string) => ({
    MessageId: id,
    ReceiptHandle: `rh-${id}`,
    Body: `{"eventId":"${id}"}`,
    MessageAttributes: {
      runId: { DataType: 'String', StringValue: 'run-1' },
      eventId: { DataType: 'String', StringValue: id },
      ...(redriveCount !== undefined
        ? { redriveCount: { DataType: 'String', StringValue: redriveCount } }
        : {}),
    },
  });

  it('keeps the body and attributes and counts the redrive up', () => {
    expect(redrivenAttributes(message('evt-1'))).toEqual({
      runId: { DataType: 'String', StringValue: 'run-1' },
      eventId: { DataType: 'String', StringValue: 'evt-1' },
      redriveCount: { DataType: 'String', StringValue: '1' },
    });
    expect(redrivenAttributes(message('evt-1', '2')).redriveCount).toEqual({
      DataType: 'String',
      StringValue: '3',
    });
    expect(() => redrivenAttributes(message('evt-1', 'two'))).toThrow(InvalidRecordError);
  });

  it('deletes from the DLQ only what was sent, and stops when the DLQ is empty', async () => {
    held(2);
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message('evt-1'), message('evt-2')] })
      .resolves({ Messages: [] });
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [{ Id: '1', MessageId: 'n', MD5OfMessageBody: '' }],
      Failed: [{ Id: '0', Code: 'InternalError', Message: 'try again', SenderFault: false }],
    });
    sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [{ Id: '1' }], Failed: [] });

    await expect(redriveByCopy(new SQSClient({}), 'dlq', 'source')).rejects.toThrow(
      /refused to send 1 message\(s\) back to source \(InternalError: try again\); they stay in dlq/,
    );
    const sent = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input;
    expect(sent?.QueueUrl).toBe('source');
    expect(sent?.Entries?.map((entry) => entry.MessageBody)).toEqual([
      '{"eventId":"evt-1"}',
      '{"eventId":"evt-2"}',
    ]);
    // Only the message whose send succeeded left the DLQ: the other is still there.
    expect(sqs.commandCalls(DeleteMessageBatchCommand)[0]?.args[0].input).toEqual({
      QueueUrl: 'dlq',
      Entries: [{ Id: '1', ReceiptHandle: 'rh-evt-2' }],
    });
  });

  it('returns how many it moved', async () => {
    held(2);
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message('evt-1')] })
      .resolvesOnce({ Messages: [] })
      .resolvesOnce({ Messages: [message('evt-2')] })
      .resolves({ Messages: [] });
    sqs
      .on(SendMessageBatchCommand)
      .resolves({ Successful: [{ Id: '0', MessageId: 'n', MD5OfMessageBody: '' }] });
    sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [{ Id: '0' }] });
    await expect(redriveByCopy(new SQSClient({}), 'dlq', 'source')).resolves.toBe(2);
  });

  it('moves at most what the DLQ held when it started: a copy that comes back meanwhile stays', async () => {
    held(1);
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message('evt-1')] })
      .resolves({ Messages: [message('evt-1-again')] });
    sqs
      .on(SendMessageBatchCommand)
      .resolves({ Successful: [{ Id: '0', MessageId: 'n', MD5OfMessageBody: '' }] });
    sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [{ Id: '0' }] });
    await expect(redriveByCopy(new SQSClient({}), 'dlq', 'source')).resolves.toBe(1);
    expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(1);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.MaxNumberOfMessages).toBe(1);
  });

  it('sends near-limit messages in batches within SQS’s payload maximum', async () => {
    held(3);
    const big = (id: string) => ({ ...message(id), Body: 'x'.repeat(600_000) });
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [big('evt-1'), big('evt-2'), message('evt-3')] })
      .resolves({ Messages: [] });
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: unknown[] }) => ({
      Successful: input.Entries.map((_, index) => ({
        Id: String(index),
        MessageId: 'n',
        MD5OfMessageBody: '',
      })),
    }));
    sqs.on(DeleteMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => ({
      Successful: input.Entries.map(({ Id }) => ({ Id })),
    }));
    await expect(redriveByCopy(new SQSClient({}), 'dlq', 'source')).resolves.toBe(3);
    const batches = sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input.Entries ?? []);
    expect(batches.map((entries) => entries.length)).toEqual([1, 2]);
    for (const entries of batches) {
      const bytes = entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.MessageBody ?? ''), 0);
      expect(bytes).toBeLessThanOrEqual(1_048_576);
    }
  });

  it('counts the body and every attribute toward a message’s size, the added redriveCount included', () => {
    const m = message('evt-1');
    const attributes = redrivenAttributes(m);
    const expected =
      Buffer.byteLength(m.Body ?? '') +
      Object.entries(attributes).reduce(
        (sum, [name, value]) =>
          sum +
          Buffer.byteLength(name) +
          Buffer.byteLength(value.DataType ?? '') +
          Buffer.byteLength(value.StringValue ?? ''),
        0,
      );
    expect(messageBytes(m)).toBe(expected);
    expect(bySize([m, m, m], 2 * expected)).toHaveLength(2);
  });
});

import {
  DeleteMessageBatchCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidRecordError } from '../../../../functions/shared/errors.js';
import { explainRedriveError } from '../../../../harness/environments/deployed.js';
import { RedriveUnsupportedError } from '../../../../harness/environments/deployed-errors.js';
import {
  MessageMoveTaskError,
  redriveByCopy,
  redrivenAttributes,
  redriveWithMoveTask,
} from '../../../../harness/environments/redrive.js';

const sqs = mockClient(SQSClient);
const DLQ_ARN = 'arn:aws:sqs:eu-west-1:123456789012:effectively-once-dlq';
const fast = { pollMs: 0, sleep: async () => undefined };

beforeEach(() => sqs.reset());

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
});

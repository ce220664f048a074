import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

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

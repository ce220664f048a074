import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** A queue's approximate depth: visible (+ delayed) and in flight (received, not yet deleted). */
export async function readQueueDepth(
  sqs: SQSClient,
  queueUrl: string,
): Promise<{ readonly visible: number; readonly inFlight: number }> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    visible:
      Number(Attributes.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

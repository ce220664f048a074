import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ResolvedResource } from './resolve-stack.js';

/**
 * What CloudFormation would create for the assembly's tables and queues, from their resolved
 * properties alone: the same names, keys, streams, TTL, timeouts and redrive policies. Properties
 * the emulators cannot show (encryption at rest, point-in-time recovery, billing) are listed by
 * resource-types.ts as accepted and not emulated.
 */

type Properties = Record<string, unknown>;

/** A table: keys, indexes and stream as the template declares them; its TTL setting after. */
export async function createTable(dynamodb: DynamoDBClient, table: ResolvedResource): Promise<void> {
  const p = table.properties as Properties;
  const stream = p.StreamSpecification as { StreamViewType?: string } | undefined;
  const input: CreateTableCommandInput = {
    TableName: table.physicalId,
    KeySchema: p.KeySchema as CreateTableCommandInput['KeySchema'],
    AttributeDefinitions: p.AttributeDefinitions as CreateTableCommandInput['AttributeDefinitions'],
    // Capacity is not emulated; DynamoDB Local accepts on-demand for every table.
    BillingMode: 'PAY_PER_REQUEST',
    ...(p.GlobalSecondaryIndexes
      ? {
          GlobalSecondaryIndexes: (p.GlobalSecondaryIndexes as Properties[]).map((index) => ({
            IndexName: index.IndexName as string,
            KeySchema: index.KeySchema as CreateTableCommandInput['KeySchema'],
            Projection: index.Projection as { ProjectionType?: 'ALL' | 'KEYS_ONLY' | 'INCLUDE' },
          })),
        }
      : {}),
    ...(stream?.StreamViewType
      ? {
          StreamSpecification: {
            StreamEnabled: true,
            StreamViewType: stream.StreamViewType as
              | 'NEW_IMAGE'
              | 'OLD_IMAGE'
              | 'NEW_AND_OLD_IMAGES'
              | 'KEYS_ONLY',
          },
        }
      : {}),
  };
  await dynamodb.send(new CreateTableCommand(input));
  const ttl = p.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
  if (ttl?.Enabled && ttl.AttributeName) {
    await dynamodb.send(
      new UpdateTimeToLiveCommand({
        TableName: table.physicalId,
        TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
      }),
    );
  }
}

/** SQS attribute names for the queue properties the template may set (AWS::SQS::Queue's). */
const QUEUE_ATTRIBUTES: Readonly<Record<string, string>> = {
  VisibilityTimeout: 'VisibilityTimeout',
  MessageRetentionPeriod: 'MessageRetentionPeriod',
  MaximumMessageSize: 'MaximumMessageSize',
  DelaySeconds: 'DelaySeconds',
  ReceiveMessageWaitTimeSeconds: 'ReceiveMessageWaitTimeSeconds',
  FifoQueue: 'FifoQueue',
  ContentBasedDeduplication: 'ContentBasedDeduplication',
  DeduplicationScope: 'DeduplicationScope',
};

/** A queue, with its redrive policy (its DLQ must exist first: queuesInCreationOrder). */
export async function createQueue(sqs: SQSClient, queue: ResolvedResource): Promise<string> {
  const p = queue.properties as Properties;
  const attributes: Record<string, string> = {};
  for (const [property, attribute] of Object.entries(QUEUE_ATTRIBUTES)) {
    if (p[property] !== undefined) attributes[attribute] = String(p[property]);
  }
  if (p.RedrivePolicy !== undefined) attributes.RedrivePolicy = JSON.stringify(p.RedrivePolicy);
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: queue.attributes.QueueName ?? queue.physicalId,
      Attributes: attributes,
    }),
  );
  if (!QueueUrl) throw new Error(`CreateQueue returned no URL for ${queue.logicalId}`);
  return QueueUrl;
}

/** DLQs before the queues whose redrive policy names them, as CloudFormation orders them. */
export function queuesInCreationOrder(queues: readonly ResolvedResource[]): ResolvedResource[] {
  const hasRedrive = (queue: ResolvedResource) =>
    (queue.properties as Properties).RedrivePolicy !== undefined;
  return [...queues.filter((queue) => !hasRedrive(queue)), ...queues.filter(hasRedrive)];
}

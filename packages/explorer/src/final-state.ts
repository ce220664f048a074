import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { receiveAll, releaseAll } from './queues.js';
import type { Change, DeadLetter } from './scenario.js';

/** Every item of a table, unmarshalled. */
export async function scanTable(
  ddb: DynamoDBDocumentClient,
  tableName: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

/**
 * Every record of a table's stream, in order (DynamoDB Streams, which DynamoDB Local serves on its
 * own endpoint). Needs `@aws-sdk/client-dynamodb-streams`, an optional peer of this package.
 */
export async function readChanges(client: DynamoDBClient, streamArn: string): Promise<Change[]> {
  const streams = await import('@aws-sdk/client-dynamodb-streams').catch((error: unknown) => {
    throw new Error(
      'a table of the scenario has a stream: reading it needs @aws-sdk/client-dynamodb-streams (npm install --save-dev @aws-sdk/client-dynamodb-streams@3.1141.0, the version tested, or any 3.x)',
      { cause: error },
    );
  });
  const reader = new streams.DynamoDBStreamsClient({
    region: await client.config.region(),
    credentials: await client.config.credentials(),
    endpoint: await endpointOf(client),
  });
  try {
    const { StreamDescription } = await reader.send(
      new streams.DescribeStreamCommand({ StreamArn: streamArn }),
    );
    const changes: Change[] = [];
    for (const shard of StreamDescription?.Shards ?? []) {
      let iterator = (
        await reader.send(
          new streams.GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shard.ShardId,
            ShardIteratorType: 'TRIM_HORIZON',
          }),
        )
      ).ShardIterator;
      // An open shard always hands back an iterator: stop at the first empty page.
      while (iterator !== undefined) {
        const page = await reader.send(new streams.GetRecordsCommand({ ShardIterator: iterator }));
        const records = page.Records ?? [];
        for (const record of records) {
          const data = record.dynamodb;
          changes.push({
            type: record.eventName as Change['type'],
            keys: unmarshall((data?.Keys ?? {}) as never),
            ...(data?.OldImage ? { oldImage: unmarshall(data.OldImage as never) } : {}),
            ...(data?.NewImage ? { newImage: unmarshall(data.NewImage as never) } : {}),
          });
        }
        if (records.length === 0) break;
        iterator = page.NextShardIterator;
      }
    }
    return changes;
  } finally {
    reader.destroy();
  }
}

async function endpointOf(client: DynamoDBClient): Promise<string> {
  const endpoint = await client.config.endpoint?.();
  if (endpoint === undefined) throw new Error('the explorer reads streams from a local endpoint only');
  return `${endpoint.protocol}//${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ''}${endpoint.path}`;
}

/**
 * Every message the DLQ holds, with the event it was sent as. Read, then made visible again: an
 * invariant may read the DLQ itself (the lab's verifier sweeps it).
 */
export async function readDeadLetters(
  sqs: SQSClient,
  queueUrl: string,
  eventOf: (message: Message) => string,
): Promise<DeadLetter[]> {
  const messages = await receiveAll(sqs, queueUrl);
  await releaseAll(
    sqs,
    queueUrl,
    messages.map((message) => ({ receiptHandle: message.ReceiptHandle ?? '' })),
  );
  return messages.map((message) => ({
    eventId: eventOf(message),
    body: message.Body ?? '',
    receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
  }));
}

import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetShardIteratorCommand,
  type Shard,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';

/** Reading a DynamoDB stream's shards, as the outbox's relay and the assembly's stream mappings both do. */

/**
 * Iterators expire after 15 minutes. And DynamoDB Local answers TrimmedDataAccessException to the
 * first GetRecords after the first write when the iterator was taken on an empty shard (a known bug:
 * aws/aws-sdk-java#2923; nothing is trimmed within a day on it): a fresh iterator from the
 * checkpoint reads on. Bounded, so that a real trim (a checkpoint older than the stream's 24 h)
 * still fails, and says so.
 */
export function isStaleIterator(error: unknown): boolean {
  return error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException;
}

/** Every shard of a stream, DescribeStream page by page (the local stream mapping reads them too). */
export async function listShards(streams: DynamoDBStreamsClient, streamArn: string): Promise<Shard[]> {
  const shards: Shard[] = [];
  let start: string | undefined;
  do {
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: streamArn, ...(start ? { ExclusiveStartShardId: start } : {}) }),
    );
    shards.push(...(StreamDescription?.Shards ?? []));
    start = StreamDescription?.LastEvaluatedShardId;
  } while (start !== undefined);
  return shards;
}

/** A shard's iterator after `afterSequence`, or at `initial` when nothing was read yet. */
export async function shardIterator(
  streams: DynamoDBStreamsClient,
  streamArn: string,
  shardId: string,
  afterSequence: string | undefined,
  initial: 'TRIM_HORIZON' | 'LATEST' = 'TRIM_HORIZON',
): Promise<string> {
  const { ShardIterator } = await streams.send(
    new GetShardIteratorCommand({
      StreamArn: streamArn,
      ShardId: shardId,
      ...(afterSequence
        ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: afterSequence }
        : { ShardIteratorType: initial }),
    }),
  );
  if (ShardIterator === undefined)
    throw new Error(`GetShardIterator returned no iterator for shard ${shardId}`);
  return ShardIterator;
}

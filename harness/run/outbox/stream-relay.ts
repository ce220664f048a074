import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  type Shard,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  type OutboxMessage,
  type OutboxTarget,
  outboxMessageOf,
  publishOutboxMessages,
} from '../../../services/outbox/outbox.js';
import { isStaleIterator, listShards, shardIterator } from '../../local-aws/dynamodb-streams.js';
import { checkpointKey, type OutboxTableNames } from './tables.js';

/**
 * The embedded relay: what Lambda's DynamoDB Streams event source mapping does for
 * services/outbox/relay.ts on AWS, with the checkpoint made visible (and killable). It follows
 * the outbox table's stream shard by shard (a child only after its parent is read to its end),
 * publishes the run's inserts with the Lambda relay's publish, and checkpoints per shard the last
 * sequence number it published. A relay started after a crash resumes after that checkpoint: what
 * it published since is published again.
 */
export interface StreamRelayDeps {
  readonly streams: DynamoDBStreamsClient;
  readonly dynamodb: DynamoDBClient;
  readonly ddb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly runId: string;
  readonly tables: OutboxTableNames;
  readonly targets: readonly OutboxTarget[];
  /** Wait between empty reads of every open shard. */
  readonly pollMs: number;
  /** Called after a chunk reached every queue and before its checkpoint: the crash point. */
  readonly afterPublish: (chunk: readonly OutboxMessage[]) => Promise<void>;
  readonly onSent: (target: string, count: number) => void;
  /** True once the relay may stop when it has nothing to read. */
  readonly stopRequested: () => boolean;
}

/** Messages published between two checkpoints: one SendMessageBatch per queue. */
const CHUNK = 10;
/** How often the list of shards is read again (a shard closes and children appear every few hours on AWS). */
const SHARD_REFRESH_MS = 1_000;

const MAX_STALE_READS = 5;

interface Checkpoint {
  readonly sequenceNumber?: string;
  /** The shard is closed and read to its end. */
  readonly done: boolean;
}

export async function relayStream(deps: StreamRelayDeps): Promise<void> {
  const streamArn = await outboxStreamArn(deps);
  const checkpoints = await readCheckpoints(deps);
  const iterators = new Map<string, string>();
  const staleReads = new Map<string, number>();
  let shards: Shard[] = [];
  let shardsReadAt = 0;
  for (;;) {
    if (Date.now() - shardsReadAt >= SHARD_REFRESH_MS) {
      shards = await listShards(deps.streams, streamArn);
      shardsReadAt = Date.now();
    }
    const known = new Set(shards.map((shard) => shard.ShardId));
    let read = 0;
    for (const shard of shards) {
      const shardId = shard.ShardId;
      if (shardId === undefined || checkpoints.get(shardId)?.done) continue;
      // A child holds what was written after its parent closed: its parent's records come first.
      const parent = shard.ParentShardId;
      if (parent !== undefined && known.has(parent) && !checkpoints.get(parent)?.done) continue;
      const iterator =
        iterators.get(shardId) ??
        (await shardIterator(deps.streams, streamArn, shardId, checkpoints.get(shardId)?.sequenceNumber));
      let page: { Records?: StreamRecord[]; NextShardIterator?: string };
      try {
        page = await deps.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      } catch (error) {
        if (!isStaleIterator(error) || (staleReads.get(shardId) ?? 0) >= MAX_STALE_READS) throw error;
        // The checkpoint says where to start again.
        staleReads.set(shardId, (staleReads.get(shardId) ?? 0) + 1);
        iterators.delete(shardId);
        continue;
      }
      staleReads.delete(shardId);
      const records = page.Records ?? [];
      read += records.length;
      await relayRecords(deps, shardId, records, checkpoints);
      if (page.NextShardIterator === undefined) {
        const last = checkpoints.get(shardId)?.sequenceNumber;
        await saveCheckpoint(
          deps,
          shardId,
          { ...(last ? { sequenceNumber: last } : {}), done: true },
          checkpoints,
        );
        iterators.delete(shardId);
      } else {
        iterators.set(shardId, page.NextShardIterator);
      }
    }
    if (read === 0) {
      if (deps.stopRequested()) return;
      await new Promise((resolve) => setTimeout(resolve, deps.pollMs));
    }
  }
}

/** Publishes the run's inserts of one page in chunks, each followed by its checkpoint. */
async function relayRecords(
  deps: StreamRelayDeps,
  shardId: string,
  records: readonly StreamRecord[],
  checkpoints: Map<string, Checkpoint>,
): Promise<void> {
  let chunk: OutboxMessage[] = [];
  let lastSequence: string | undefined;
  const flush = async () => {
    if (lastSequence === undefined) return;
    if (chunk.length > 0) {
      await publishOutboxMessages(deps.sqs, deps.targets, chunk, { onSent: deps.onSent });
      await deps.afterPublish(chunk);
    }
    await saveCheckpoint(deps, shardId, { sequenceNumber: lastSequence, done: false }, checkpoints);
    chunk = [];
    lastSequence = undefined;
  };
  for (const record of records) {
    const image = record.dynamodb?.NewImage;
    // Other runs share the table (and TTL deletes show up as REMOVE): skipped, but checkpointed past.
    if (record.eventName === 'INSERT' && image?.runId?.S === deps.runId) chunk.push(outboxMessageOf(image));
    lastSequence = record.dynamodb?.SequenceNumber ?? lastSequence;
    if (chunk.length === CHUNK) await flush();
  }
  await flush();
}

async function outboxStreamArn(deps: StreamRelayDeps): Promise<string> {
  const { Table } = await deps.dynamodb.send(new DescribeTableCommand({ TableName: deps.tables.outbox }));
  const arn = Table?.LatestStreamArn;
  if (arn === undefined || Table?.StreamSpecification?.StreamEnabled !== true) {
    throw new Error(
      `table ${deps.tables.outbox} has no stream: the outbox table needs StreamSpecification ` +
        '{ StreamEnabled: true, StreamViewType: NEW_IMAGE } (harness/run/outbox/tables.ts creates it so)',
    );
  }
  return arn;
}

async function readCheckpoints(deps: StreamRelayDeps): Promise<Map<string, Checkpoint>> {
  const checkpoints = new Map<string, Checkpoint>();
  const { pk } = checkpointKey(deps.runId, '');
  let start: Record<string, unknown> | undefined;
  do {
    const page = await deps.ddb.send(
      new QueryCommand({
        TableName: deps.tables.state,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      checkpoints.set(String(item.shardId), {
        ...(typeof item.sequenceNumber === 'string' ? { sequenceNumber: item.sequenceNumber } : {}),
        done: item.done === true,
      });
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return checkpoints;
}

async function saveCheckpoint(
  deps: StreamRelayDeps,
  shardId: string,
  checkpoint: Checkpoint,
  checkpoints: Map<string, Checkpoint>,
): Promise<void> {
  await deps.ddb.send(
    new PutCommand({
      TableName: deps.tables.state,
      Item: {
        ...checkpointKey(deps.runId, shardId),
        shardId,
        ...checkpoint,
        savedAt: new Date().toISOString(),
      },
    }),
  );
  checkpoints.set(shardId, checkpoint);
}

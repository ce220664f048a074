/**
 * What a local DynamoDB stream mapping (harness/environments/assembly/stream-mapping.ts) reads, sends and
 * reports, apart from the mapping's own bookkeeping:
 *
 * - the event: a GetRecords record as Lambda puts it in Records[] (toEventRecord);
 * - the function's answer, as Lambda reads it with or without ReportBatchItemFailures (outcomeOf);
 * - the invocation record sent to the on-failure destination (invocationRecord), and which records
 *   are too old to be sent (expiredPrefix), and what follows a failed invocation (afterFailure);
 * - reading the stream: the shard list, iterators, one GetRecords with stale iterators taken again
 *   (listShards, readShard).
 */
import { randomUUID } from 'node:crypto';
import {
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  type AttributeValue as SdkAttributeValue,
  type _Record as SdkStreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue, DynamoDBRecord, StreamRecord } from 'aws-lambda';
import { isStaleIterator, shardIterator } from '../../local-aws/dynamodb-streams.js';
import type { InvocationResult } from '../../local-aws/lambda-runtime/execution-environment.js';

// ---------------------------------------------------------------------------------------------
// The event Lambda sends (with-ddb.html, "Example DynamoDB Streams record event"; the record's
// fields: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_Record.html).

/**
 * A GetRecords record as Lambda puts it in the event: ApproximateCreationDateTime in epoch seconds,
 * binary values in base64, eventSourceARN the stream's ARN as the function sees it (the mapping's
 * eventSourceArn), awsRegion the mapping's Region.
 */
export function toEventRecord(
  record: SdkStreamRecord,
  eventSourceArn: string,
  region: string,
): DynamoDBRecord {
  const source = record.dynamodb;
  const sequenceNumber = source?.SequenceNumber;
  if (sequenceNumber === undefined) {
    throw new Error(`a stream record of ${eventSourceArn} has no SequenceNumber (eventID ${record.eventID})`);
  }
  const created = source?.ApproximateCreationDateTime;
  const dynamodb: StreamRecord = {
    ...(created ? { ApproximateCreationDateTime: created.getTime() / 1000 } : {}),
    ...(source?.Keys ? { Keys: imageOf(source.Keys) } : {}),
    ...(source?.NewImage ? { NewImage: imageOf(source.NewImage) } : {}),
    ...(source?.OldImage ? { OldImage: imageOf(source.OldImage) } : {}),
    SequenceNumber: sequenceNumber,
    ...(source?.SizeBytes === undefined ? {} : { SizeBytes: source.SizeBytes }),
    ...(source?.StreamViewType ? { StreamViewType: source.StreamViewType } : {}),
  };
  return {
    ...(record.eventID === undefined ? {} : { eventID: record.eventID }),
    ...(record.eventName === undefined ? {} : { eventName: record.eventName }),
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    dynamodb,
    eventSourceARN: eventSourceArn,
    // TTL deletions: Records[].userIdentity.type "Service", .principalId "dynamodb.amazonaws.com"
    // (API_streams_Record), where the Streams API (and the SDK) name them Type and PrincipalId.
    ...(record.userIdentity
      ? { userIdentity: { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId } }
      : {}),
  };
}

function imageOf(image: Record<string, SdkAttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, wireValueOf(value)]));
}

/** The SDK's AttributeValue (binary as bytes) as JSON carries it (binary as base64). */
function wireValueOf(value: SdkAttributeValue): AttributeValue {
  const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  if (value.B !== undefined) return { B: base64(value.B) };
  if (value.BS !== undefined) return { BS: value.BS.map(base64) };
  if (value.L !== undefined) return { L: value.L.map(wireValueOf) };
  if (value.M !== undefined) return { M: imageOf(value.M) };
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  throw new Error(`an attribute value of an unknown type: ${JSON.stringify(value.$unknown ?? value)}`);
}

// ---------------------------------------------------------------------------------------------
// The answer Lambda reads (services-ddb-batchfailurereporting.html).

/** What an invocation means for the batch: done, done up to `from` (then retried from it), or failed whole. */
export type Outcome =
  | { readonly kind: 'success' }
  | { readonly kind: 'partial'; readonly from: number }
  | { readonly kind: 'failure'; readonly functionError: boolean };

/**
 * How Lambda reads the function's answer (services-ddb-batchfailurereporting.html, "Success and
 * failure conditions"): without ReportBatchItemFailures any answer is success; with it, a null or
 * empty answer or list is success, an itemIdentifier that is empty, null, or not a sequence
 * number of the batch fails the batch whole, and otherwise the lowest one is where it resumes.
 */
export function outcomeOf(
  result: InvocationResult,
  records: readonly DynamoDBRecord[],
  report: boolean,
): Outcome {
  if (result.status === 'error') return { kind: 'failure', functionError: true };
  const response = result.response;
  if (!report || response === null || response === undefined) return { kind: 'success' };
  // A string, a number or a top-level array is not the JSON object Lambda reads.
  if (typeof response !== 'object' || Array.isArray(response))
    return { kind: 'failure', functionError: false };
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === null || failures === undefined) return { kind: 'success' };
  if (!Array.isArray(failures)) return { kind: 'failure', functionError: false };
  if (failures.length === 0) return { kind: 'success' };
  const positions = new Map(records.map((record, index) => [record.dynamodb?.SequenceNumber, index]));
  let from = Number.POSITIVE_INFINITY;
  for (const failure of failures as unknown[]) {
    const id =
      typeof failure === 'object' && failure !== null && 'itemIdentifier' in failure
        ? failure.itemIdentifier
        : undefined;
    const position = typeof id === 'string' && id !== '' ? positions.get(id) : undefined;
    if (position === undefined) return { kind: 'failure', functionError: false };
    from = Math.min(from, position);
  }
  return { kind: 'partial', from };
}

/** A batch waiting to be (re)invoked, in shard order. */
export interface PendingBatch extends DiscardedBatch {
  readonly records: DynamoDBRecord[];
  /** Failed invocations counted against MaximumRetryAttempts (a bisection does not count). */
  readonly failures: number;
}

/**
 * What follows a failed invocation of `batch` (`invokes` counts it): how many of its first records
 * are done with (the checkpoint moves past them), then either the batch to retry (a failure counted
 * against MaximumRetryAttempts) or, with bisection on, the two halves to invoke first (not counted).
 */
export function afterFailure(
  outcome: Exclude<Outcome, { readonly kind: 'success' }>,
  batch: PendingBatch,
  invokes: number,
  bisectOnError: boolean,
):
  | { readonly done: number; readonly retry: PendingBatch }
  | { readonly done: number; readonly halves: readonly [PendingBatch, PendingBatch] } {
  const { records, failures } = batch;
  if (outcome.kind === 'partial') {
    // services-ddb-batchfailurereporting.html: checkpoint before the lowest reported sequence
    // number, retry from it (with bisection on, the batch is bisected there: the same records).
    const lastResponse = { statusCode: 200, executedVersion: '$LATEST' };
    return {
      done: outcome.from,
      retry: { records: records.slice(outcome.from), failures: failures + 1, invokes, lastResponse },
    };
  }
  const lastResponse = {
    statusCode: 200,
    executedVersion: '$LATEST',
    ...(outcome.functionError ? { functionError: 'Unhandled' } : {}),
  };
  if (bisectOnError && records.length > 1) {
    // Splitting does not count towards the retry quota (services-dynamodb-errors.html).
    const half = Math.ceil(records.length / 2);
    return {
      done: 0,
      halves: [
        { records: records.slice(0, half), failures, invokes, lastResponse },
        { records: records.slice(half), failures, invokes, lastResponse },
      ],
    };
  }
  return { done: 0, retry: { records, failures: failures + 1, invokes, lastResponse } };
}

// ---------------------------------------------------------------------------------------------
// The on-failure destination (services-dynamodb-errors.html).

/** What Lambda sends to a stream mapping's on-failure destination (services-dynamodb-errors.html, "Invocation record"). */
export interface StreamInvocationRecord {
  readonly requestContext: {
    readonly requestId: string;
    readonly functionArn: string;
    readonly condition: FailureCondition;
    readonly approximateInvokeCount: number;
  };
  /** The last invocation's outcome; absent when the records expired before any invocation. */
  readonly responseContext?: {
    readonly statusCode: number;
    readonly executedVersion: string;
    readonly functionError?: string;
  };
  readonly version: '1.0';
  readonly timestamp: string;
  readonly DDBStreamBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string;
    readonly endSequenceNumber: string;
    readonly approximateArrivalOfFirstRecord?: string;
    readonly approximateArrivalOfLastRecord?: string;
    readonly batchSize: number;
    /** The stream's ARN as the function sees it: the events' eventSourceARN. */
    readonly streamArn: string;
  };
}

/**
 * AWS's documentation shows `RetryAttemptsExhausted` only; `RecordAgeExceeded` is the value
 * LocalStack's stream poller sends for an expired record (not confirmed against AWS).
 */
export type FailureCondition = 'RetryAttemptsExhausted' | 'RecordAgeExceeded';

/** A batch given up on: its records as they were sent, and its invocations so far. */
export interface DiscardedBatch {
  readonly records: readonly DynamoDBRecord[];
  /** Invocations of this batch and of the batches it was cut from (approximateInvokeCount). */
  readonly invokes: number;
  readonly lastResponse?: StreamInvocationRecord['responseContext'];
}

/** The invocation record Lambda sends to the on-failure destination for a discarded batch. */
export function invocationRecord(
  shardId: string,
  batch: DiscardedBatch,
  condition: FailureCondition,
  /** streamArn: the events' eventSourceARN; now: epoch ms. */
  context: { readonly functionArn: string; readonly streamArn: string; readonly now: () => number },
): StreamInvocationRecord {
  const first = batch.records[0]?.dynamodb;
  const last = batch.records.at(-1)?.dynamodb;
  const arrival = (seconds: number | undefined) =>
    seconds === undefined ? undefined : `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
  const firstArrival = arrival(first?.ApproximateCreationDateTime);
  const lastArrival = arrival(last?.ApproximateCreationDateTime);
  return {
    requestContext: {
      requestId: randomUUID(),
      functionArn: context.functionArn,
      condition,
      approximateInvokeCount: batch.invokes,
    },
    ...(batch.lastResponse ? { responseContext: batch.lastResponse } : {}),
    version: '1.0',
    timestamp: new Date(context.now()).toISOString(),
    DDBStreamBatchInfo: {
      shardId,
      startSequenceNumber: first?.SequenceNumber ?? '',
      endSequenceNumber: last?.SequenceNumber ?? '',
      ...(firstArrival ? { approximateArrivalOfFirstRecord: firstArrival } : {}),
      ...(lastArrival ? { approximateArrivalOfLastRecord: lastArrival } : {}),
      batchSize: batch.records.length,
      streamArn: context.streamArn,
    },
  };
}

/**
 * How many of the first records are older than MaximumRecordAgeInSeconds (-1: none), at `nowMs`
 * (records are in age order).
 */
export function expiredPrefix(
  records: readonly DynamoDBRecord[],
  maxAgeSeconds: number,
  nowMs: number,
): number {
  if (maxAgeSeconds < 0) return 0;
  const nowSeconds = nowMs / 1000;
  const live = records.findIndex((record) => {
    const created = record.dynamodb?.ApproximateCreationDateTime;
    return created === undefined || nowSeconds - created <= maxAgeSeconds;
  });
  return live === -1 ? records.length : live;
}

// ---------------------------------------------------------------------------------------------
// Reading the stream with harness/run/outbox/stream-relay.ts's helpers (DescribeStream pages, stale
// iterators taken again from the last record read; DynamoDB Local's quirk is explained there).

/** GetRecords returns at most 1,000 records. */
const GET_RECORDS_LIMIT = 1_000;
/** Stale iterators tolerated in a row per shard (see isStaleIterator). */
const MAX_STALE_READS = 5;

/** The stream a mapping reads (streamArn), and the ARN its events carry (eventSourceArn). */
export interface StreamSource {
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
  readonly eventSourceArn: string;
  readonly region: string;
}

/** Where a shard is being read. */
export interface ShardCursor {
  readonly shardId: string;
  /** Where the shard is first read from when nothing of it has been read. */
  readonly initialPosition: 'TRIM_HORIZON' | 'LATEST';
  iterator: string | undefined;
  /** The last record read from the shard (buffered or processed): a new iterator starts after it. */
  lastReadSequence: string | undefined;
  /** The shard is closed and read to its end. */
  ended: boolean;
  staleReads: number;
}

/** One GetRecords on the shard, as event records; the cursor moves past them. */
export async function readShard(source: StreamSource, cursor: ShardCursor): Promise<DynamoDBRecord[]> {
  cursor.iterator ??= await shardIterator(
    source.streams,
    source.streamArn,
    cursor.shardId,
    cursor.lastReadSequence,
    cursor.initialPosition,
  );
  let page: { Records?: SdkStreamRecord[]; NextShardIterator?: string };
  try {
    page = await source.streams.send(
      new GetRecordsCommand({ ShardIterator: cursor.iterator, Limit: GET_RECORDS_LIMIT }),
    );
  } catch (error) {
    if (!isStaleIterator(error) || cursor.staleReads >= MAX_STALE_READS) throw error;
    // A fresh iterator after the last record read: nothing is read twice or skipped.
    cursor.staleReads += 1;
    cursor.iterator = undefined;
    return [];
  }
  cursor.staleReads = 0;
  const records = (page.Records ?? []).map((record) =>
    toEventRecord(record, source.eventSourceArn, source.region),
  );
  cursor.lastReadSequence = records.at(-1)?.dynamodb?.SequenceNumber ?? cursor.lastReadSequence;
  cursor.iterator = page.NextShardIterator;
  if (page.NextShardIterator === undefined) cursor.ended = true;
  return records;
}

export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

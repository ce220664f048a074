import { BatchWriteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { chunks } from '../contract/chunks.js';
import { manifestEventKey, manifestPartitionKey, SK, TTL_ATTRIBUTE } from '../contract/ledger-keys.js';
import { MANIFEST_TTL_SECONDS } from '../contract/retention.js';
import { MODE_NAMES, type Mode } from '../contract/topology.js';
import { type LedgerReader, numberAttribute, queryPartition } from './ledger-reader.js';

/**
 * The producer's manifest: one item per event it sent, so the verifier can join by event id, and
 * a summary. It lives in its own partition, which no consumer role may write.
 */
export interface ManifestEvent {
  readonly eventId: string;
  readonly accountId: string;
  readonly amountCents: number;
  /** The event's position in its account's stream; absent in manifests written before it existed. */
  readonly seq?: number;
  /** Set when the producer sent this event as an invalid body on purpose: which kind of invalid. */
  readonly poison?: string;
}

/** One SQS message the producer sends (harness/run/producer.ts): an event's body (valid or poison), once or twice. */
export interface OutgoingMessage {
  readonly eventId: string;
  /** Its account: the message group on a FIFO queue (a poison body may not say it). */
  readonly accountId: string;
  readonly body: string;
}

export interface Manifest {
  readonly runId: string;
  /** Every event, in production order; poison events carry their kind. */
  readonly events: readonly ManifestEvent[];
  /** What goes to each mode's queue, in order: the events' bodies plus the producer's re-sends. */
  readonly messages: readonly OutgoingMessage[];
  /** Σ amounts of the valid events. */
  readonly expectedCents: number;
  readonly poison: number;
  readonly producerDuplicates: number;
}

export interface ManifestSummary {
  /** Events in the manifest, poison included. */
  readonly produced: number;
  /** Events sent as invalid bodies. */
  readonly poison: number;
  /** Events sent twice by the producer (same event id, a second SQS message). */
  readonly producerDuplicates: number;
  /** Σ amounts of the valid events. */
  readonly expectedCents: number;
  /** The modes whose queues received the run. */
  readonly modes: readonly Mode[];
}

interface ManifestStore {
  readonly ddb: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** Writes the events with BatchWriteItem (25 per call, a few calls in flight), retrying unprocessed items. */
export async function writeManifestEvents(
  store: ManifestStore,
  runId: string,
  events: readonly ManifestEvent[],
): Promise<void> {
  const pk = manifestPartitionKey(runId);
  const ttl = Math.floor(Date.now() / 1000) + MANIFEST_TTL_SECONDS;
  const batches = chunks(events, 25);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < batches.length; index = next++) {
      const batch = batches[index] ?? [];
      let requests = batch.map((event) => ({
        PutRequest: { Item: { pk, sk: manifestEventKey(event.eventId), ...event, [TTL_ATTRIBUTE]: ttl } },
      }));
      for (let attempt = 1; requests.length > 0; attempt += 1) {
        const { UnprocessedItems } = await store.ddb.send(
          new BatchWriteCommand({ RequestItems: { [store.tableName]: requests } }),
        );
        requests = (UnprocessedItems?.[store.tableName] ?? []) as typeof requests;
        if (requests.length === 0) break;
        if (attempt >= 8)
          throw new Error(`DynamoDB left ${requests.length} manifest item(s) unprocessed 8 times`);
        await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, batches.length) }, worker));
}

export async function writeManifestSummary(
  store: ManifestStore,
  runId: string,
  summary: ManifestSummary,
): Promise<void> {
  await store.ddb.send(
    new PutCommand({
      TableName: store.tableName,
      Item: {
        pk: manifestPartitionKey(runId),
        sk: SK.manifestSummary,
        ...summary,
        modes: [...summary.modes],
        [TTL_ATTRIBUTE]: Math.floor(Date.now() / 1000) + MANIFEST_TTL_SECONDS,
      },
    }),
  );
}

export async function readManifestSummary(
  reader: LedgerReader,
  runId: string,
): Promise<ManifestSummary | undefined> {
  for await (const item of queryPartition(reader, manifestPartitionKey(runId), SK.manifestSummary, [
    'produced',
    'poison',
    'producerDuplicates',
    'expectedCents',
    'modes',
  ])) {
    const modes = Array.isArray(item.modes) ? item.modes.filter((mode) => MODE_NAMES.includes(mode)) : [];
    return {
      produced: numberAttribute(item, 'produced'),
      poison: numberAttribute(item, 'poison'),
      producerDuplicates: numberAttribute(item, 'producerDuplicates'),
      expectedCents: numberAttribute(item, 'expectedCents'),
      modes,
    };
  }
  return undefined;
}

/** The manifest's events in event-id order, one page at a time. */
export async function* readManifestEvents(
  reader: LedgerReader,
  runId: string,
): AsyncGenerator<ManifestEvent> {
  for await (const item of queryPartition(reader, manifestPartitionKey(runId), SK.manifestEventPrefix, [
    'eventId',
    'accountId',
    'amountCents',
    'seq',
    'poison',
  ])) {
    yield {
      eventId: String(item.eventId),
      accountId: String(item.accountId),
      amountCents: numberAttribute(item, 'amountCents'),
      ...(typeof item.seq === 'number' ? { seq: item.seq } : {}),
      ...(typeof item.poison === 'string' ? { poison: item.poison } : {}),
    };
  }
}

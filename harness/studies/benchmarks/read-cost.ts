/**
 * entry-upsert's price, on the read side (issue 15, "the honest price"): it has no balance item, so
 * reading an account's balance sums its entries. Measured against DynamoDB Local, for N entries per
 * account, what ONE balance read costs — read units as DynamoDB Local reports them
 * (`ReturnConsumedCapacity: TOTAL`), requests (pages of at most 1 MB) and milliseconds — beside one
 * `GetItem` of a balance item, what every mode that keeps a balance reads.
 *
 * Two readers of the entries:
 *
 * - **today's keys** (contract/ledger-keys.ts): an entry is `APP#<eventId>` under the run's mode
 *   partition, so one account's entries are NOT contiguous: they are interleaved with every other
 *   account's in event-id order. The only reader is a `Query` of the mode's `APP#` range with a
 *   filter on `accountId` — and a filter does not reduce what is read (DynamoDB bills the items the
 *   key condition reads, before the filter): it reads every entry of every account.
 * - **entries keyed by account**: the same items with the account in the key, contiguous
 *   (`ENT#<accountId>#<eventId>` here, in a partition of their own; in production the account as the
 *   partition key, or a global secondary index on it). A `Query` then reads that account's entries
 *   only. Not what modes/entry-upsert.ts writes: what a ledger that reads balances this way
 *   would need (a GSI adds a write unit per entry written; re-keying the table loses the verifier's
 *   event-id order).
 *
 * The entries are copies of one entry that entry-upsert's own `applyEntryUpsert` wrote (same
 * attributes, same sizes), with their own event id, account, amount and payload hash, written with
 * BatchWriteItem; each size adds to the same entries, so the largest size's writes are the whole
 * setup. The sum every reader computes is checked against the amounts written.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { chunks } from '../../../contract/chunks.js';
import { balanceKey, markerKey, partitionKey, SK } from '../../../contract/ledger-keys.js';
import { type MessageBody, payloadHash } from '../../../contract/message.js';
import { buildConsumerDeps, harnessConfig } from '../../../modes/kit/consumer.js';
import { createLedgerTable } from '../../environments/provision.js';
import { startDynamoDbEmulator } from '../../local-aws/emulators/dynamodb-emulator.js';
import { LOCAL_CREDENTIALS } from '../../local-aws/local-identity.js';
import { forEachConcurrently } from '../../run/concurrently.js';
import { spread } from './spread.js';

const MODE = 'entry-upsert';
const TABLE_NAME = 'ledger-read-cost';
/** The account whose balance is read; every account has the same number of entries. */
const READ_ACCOUNT = 'acct-0';

/** What one balance read cost, one reader at one size. */
export interface ReadMeasurement {
  /** Items the key condition read (what is billed), before any filter. */
  readonly itemsRead: number;
  /** Items returned (after the filter): the account's entries. */
  readonly itemsReturned: number;
  /** Requests: Query pages (1 MB each at most), or 1 for a GetItem. */
  readonly requests: number;
  /** Σ ConsumedCapacity.CapacityUnits DynamoDB Local reported, eventually consistent reads. */
  readonly readUnitsEventual: number;
  /** The same, strongly consistent (ConsistentRead: true). */
  readonly readUnitsStrong: number;
  /** Milliseconds for the whole read (every page), strongly consistent; median and spread. */
  readonly ms: { readonly median: number; readonly min: number; readonly max: number };
  /** The balance this reader computed equals the amounts written to the account. */
  readonly exact: boolean;
}

export interface ReadCostPoint {
  readonly entriesPerAccount: number;
  readonly accounts: number;
  readonly balanceItem: ReadMeasurement;
  /** Today's keys: Query of the mode's `APP#` range, filtered on the account. */
  readonly entriesFiltered: ReadMeasurement;
  /** The entries keyed by account: Query of the account's own range. */
  readonly entriesByAccount: ReadMeasurement;
}

export interface ReadCostReport {
  readonly accounts: number;
  /** The size of one entry, in bytes by DynamoDB's rule, as entry-upsert wrote it. */
  readonly entryBytes: number;
  readonly repetitions: number;
  readonly points: readonly ReadCostPoint[];
  /** Seconds spent writing the entries (BatchWriteItem), for the record. */
  readonly setupSeconds: number;
  readonly notes: readonly string[];
}

type Item = Record<string, unknown>;

/** One entry written by entry-upsert's own credit, read back: the template of every entry here. */
async function templateEntry(ddb: DynamoDBDocumentClient, runId: string): Promise<Item> {
  // Importing a mode reads no environment: the deps below are all it uses.
  const { processBatch } = await import('../../../modes/entry-upsert.js');
  const deps = buildConsumerDeps(harnessConfig(MODE, TABLE_NAME), {
    ddb,
    sqs: new SQSClient({ region: 'us-east-1', credentials: LOCAL_CREDENTIALS }),
    logger: new Logger({ serviceName: 'read-cost', logLevel: 'ERROR' }),
  });

  const message: MessageBody = {
    eventId: 'evt-template',
    runId,
    accountId: READ_ACCOUNT,
    amountCents: 1,
    seq: 1,
    createdAt: new Date().toISOString(),
  };
  await processBatch(
    {
      Records: [
        {
          messageId: 'm-template',
          receiptHandle: 'r-template',
          body: JSON.stringify(message),
          attributes: {
            ApproximateReceiveCount: '1',
            SentTimestamp: String(Date.now()),
            SenderId: 'read-cost',
            ApproximateFirstReceiveTimestamp: String(Date.now()),
          },
          messageAttributes: {},
          md5OfBody: 'not-checked',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:entry-upsert',
          awsRegion: 'us-east-1',
        },
      ],
    },
    { awsRequestId: 'r' },
    deps,
  );
  deps.sqs.destroy();
  const { Item } = await ddb.send(
    new GetCommand({
      TableName: TABLE_NAME,
      Key: { pk: partitionKey(runId, MODE), sk: markerKey(message.eventId) },
      ConsistentRead: true,
    }),
  );
  if (!Item) throw new Error('entry-upsert wrote no entry');
  // The template is not one of the measured entries.
  return Item;
}

/** Item size by DynamoDB's rule (attribute names + values), for the plain values an entry holds. */
function approximateItemBytes(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => {
    const bytes =
      typeof value === 'number'
        ? Math.ceil(String(value).replace(/^-/, '').replace('.', '').length / 2) + 1
        : Buffer.byteLength(String(value));
    return sum + Buffer.byteLength(name) + bytes;
  }, 0);
}

async function writeAll(ddb: DynamoDBDocumentClient, items: readonly Item[]): Promise<void> {
  await forEachConcurrently(chunks([...items], 25), 8, async (chunk) => {
    let pending = chunk.map((Item) => ({ PutRequest: { Item } }));
    while (pending.length > 0) {
      const { UnprocessedItems } = await ddb.send(
        new BatchWriteCommand({ RequestItems: { [TABLE_NAME]: pending } }),
      );
      pending = (UnprocessedItems?.[TABLE_NAME] ?? []) as typeof pending;
    }
  });
}

/** Every page of one Query, with what DynamoDB Local says it read and consumed. */
async function queryAll(
  ddb: DynamoDBDocumentClient,
  input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'ExclusiveStartKey'>,
): Promise<{ sum: number; requests: number; scanned: number; returned: number; units: number; ms: number }> {
  let sum = 0;
  let requests = 0;
  let scanned = 0;
  let returned = 0;
  let units = 0;
  let startKey: Record<string, unknown> | undefined;
  const started = performance.now();
  do {
    const page = await ddb.send(
      new QueryCommand({
        ...input,
        ReturnConsumedCapacity: 'TOTAL',
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    requests += 1;
    scanned += page.ScannedCount ?? 0;
    returned += page.Count ?? 0;
    units += page.ConsumedCapacity?.CapacityUnits ?? 0;
    for (const item of page.Items ?? []) sum += Number(item.amountCents ?? 0);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { sum, requests, scanned, returned, units, ms: performance.now() - started };
}

type Reader = (
  consistent: boolean,
) => Promise<{ sum: number; requests: number; scanned: number; returned: number; units: number; ms: number }>;

/** One reader at one size: eventually consistent once, then strongly consistent `repetitions` times. */
async function measure(read: Reader, expectedCents: number, repetitions: number): Promise<ReadMeasurement> {
  const eventual = await read(false);
  const strong = [];
  for (let run = 0; run < repetitions; run += 1) strong.push(await read(true));
  const first = strong[0] ?? eventual;
  const ms = spread(strong.map((run) => Math.round(run.ms * 10) / 10));
  return {
    itemsRead: first.scanned,
    itemsReturned: first.returned,
    requests: first.requests,
    readUnitsEventual: eventual.units,
    readUnitsStrong: first.units,
    ms: { median: ms.median, min: ms.min, max: ms.max },
    exact: [eventual, ...strong].every((run) => run.sum === expectedCents),
  };
}

/**
 * Measures one balance read at each number of entries per account (ascending; 0s are ignored) in a
 * DynamoDB Local of its own: `accounts` accounts with that many entries each.
 */
export async function measureReadCost(options: {
  readonly entriesPerAccount: readonly number[];
  readonly accounts: number;
  readonly repetitions: number;
  readonly log: (message: string) => void;
}): Promise<ReadCostReport> {
  const sizes = [...new Set(options.entriesPerAccount.filter((size) => size > 0))].sort((a, b) => a - b);
  const region = 'us-east-1';
  const dynamodb = await startDynamoDbEmulator();
  const raw = new DynamoDBClient({ region, credentials: LOCAL_CREDENTIALS, endpoint: dynamodb.endpoint });
  const ddb = DynamoDBDocumentClient.from(raw);
  try {
    await createLedgerTable(raw, TABLE_NAME);
    const runId = `bench-read-cost-${Date.now()}`;
    const pk = partitionKey(runId, MODE);
    const byAccountPk = `${pk}#BY-ACCOUNT`;
    const template = await templateEntry(ddb, runId);
    await ddb.send(
      new BatchWriteCommand({
        RequestItems: { [TABLE_NAME]: [{ DeleteRequest: { Key: { pk, sk: template.sk } } }] },
      }),
    );
    const entryBytes = approximateItemBytes(template);
    // A balance item as the modes that keep one write it (ADD balanceCents), for the GetItem.
    const balancePk = partitionKey(runId, 'at-least-once');
    await ddb.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: { pk: balancePk, sk: balanceKey(READ_ACCOUNT), balanceCents: 0 },
      }),
    );

    const points: ReadCostPoint[] = [];
    let written = 0;
    let readAccountCents = 0;
    let setupMs = 0;
    for (const size of sizes) {
      const started = performance.now();
      const items: Item[] = [];
      for (let index = written; index < size; index += 1) {
        for (let account = 0; account < options.accounts; account += 1) {
          const accountId = `acct-${account}`;
          // Interleaved as the producer's event ids are: consecutive events go to different accounts.
          const eventId = `evt-${String(index * options.accounts + account).padStart(9, '0')}`;
          const amountCents = 1 + ((index * options.accounts + account) % 997);
          if (accountId === READ_ACCOUNT) readAccountCents += amountCents;
          const body: MessageBody = {
            eventId,
            runId,
            accountId,
            amountCents,
            seq: index + 1,
            createdAt: String(template.appliedAt),
          };
          const entry = { ...template, eventId, accountId, amountCents, payloadHash: payloadHash(body) };
          items.push({ ...entry, sk: markerKey(eventId) });
          // Keyed by account, a Query reads the account's range and nothing else: the read account's
          // entries and a neighbour's (so the range has an end) are all it needs.
          if (account < 2) items.push({ ...entry, pk: byAccountPk, sk: `ENT#${accountId}#${eventId}` });
        }
      }
      await writeAll(ddb, items);
      await ddb.send(
        new PutCommand({
          TableName: TABLE_NAME,
          Item: { pk: balancePk, sk: balanceKey(READ_ACCOUNT), balanceCents: readAccountCents },
        }),
      );
      written = size;
      setupMs += performance.now() - started;
      options.log(
        `read cost: ${size} entries per account × ${options.accounts} accounts written (${items.length} items)`,
      );

      const expected = readAccountCents;
      const balanceItem = await measure(
        async (consistent) => {
          const started = performance.now();
          const { Item, ConsumedCapacity } = await ddb.send(
            new GetCommand({
              TableName: TABLE_NAME,
              Key: { pk: balancePk, sk: balanceKey(READ_ACCOUNT) },
              ConsistentRead: consistent,
              ReturnConsumedCapacity: 'TOTAL',
            }),
          );
          return {
            sum: Number(Item?.balanceCents ?? Number.NaN),
            requests: 1,
            scanned: Item ? 1 : 0,
            returned: Item ? 1 : 0,
            units: ConsumedCapacity?.CapacityUnits ?? 0,
            ms: performance.now() - started,
          };
        },
        expected,
        options.repetitions,
      );
      const entriesFiltered = await measure(
        (consistent) =>
          queryAll(ddb, {
            TableName: TABLE_NAME,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :entry)',
            FilterExpression: 'accountId = :account',
            ExpressionAttributeValues: {
              ':pk': pk,
              ':entry': SK.applicationPrefix,
              ':account': READ_ACCOUNT,
            },
            ConsistentRead: consistent,
          }),
        expected,
        options.repetitions,
      );
      const entriesByAccount = await measure(
        (consistent) =>
          queryAll(ddb, {
            TableName: TABLE_NAME,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :entry)',
            ExpressionAttributeValues: { ':pk': byAccountPk, ':entry': `ENT#${READ_ACCOUNT}#` },
            ConsistentRead: consistent,
          }),
        expected,
        options.repetitions,
      );
      points.push({
        entriesPerAccount: size,
        accounts: options.accounts,
        balanceItem,
        entriesFiltered,
        entriesByAccount,
      });
    }
    return {
      accounts: options.accounts,
      entryBytes,
      repetitions: options.repetitions,
      points,
      setupSeconds: Math.round(setupMs / 100) / 10,
      notes: [
        `entry-upsert keeps no balance item: a balance is the sum of the account's entries. Its entries are keyed APP#<eventId> (contract/ledger-keys.ts), so one account's entries are interleaved with every other account's: the only read is a Query of the mode's APP# range filtered on accountId, which reads (and bills) every entry of the run's ${options.accounts} accounts — a filter does not reduce the read units.`,
        'entries keyed by account: the same items with the account in the sort key (ENT#<accountId>#<eventId>), read with a Query of that range. What a re-keyed ledger (the account as partition key) or a GSI on accountId would read; a GSI adds a write unit per entry written and reads eventually consistent only. Not what entry-upsert writes today.',
        'Read units are DynamoDB Local’s ConsumedCapacity (ReturnConsumedCapacity: TOTAL): 4 KB per unit of the items read, summed per page and rounded up, half for eventually consistent reads; a ProjectionExpression does not reduce them.',
        'A balance item: one GetItem, 1 unit strongly consistent, 0.5 eventually consistent.',
      ],
    };
  } finally {
    raw.destroy();
    await dynamodb.stop();
  }
}

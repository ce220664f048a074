// effectively-once's transaction: its items, DynamoDB's limits checked before sending, one send.
import type { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionLimitError, WriteFailedError } from './errors.js';
import { describeError } from './logger.js';
import { utf8 } from './runtime.js';

/** One item of a document client's TransactWriteItems. */
export type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/** A DynamoDB key, plain values (the document client marshalls them). */
export type Key = Record<string, string | number>;

const MAX_TEAM_ITEMS = 99;
const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;

/** Sends one transaction: undefined once committed, its cancellation if cancelled; else throws. */
export async function transact(ddb: DynamoDBDocumentClient, items: TransactItem[]) {
  try {
    // Each send is a fresh ClientRequestToken; the SDK's own retries inside it reuse one.
    await ddb.send(new TransactWriteCommand({ TransactItems: items }));
    return undefined;
  } catch (error) {
    if (!isCancellation(error)) throw new WriteFailedError(describeFailure(error), { cause: error });
    return error;
  }
}

/** DynamoDB's transaction limits, checked before sending: a refused transaction is a failed record forever. */
export function refuseOverLimits(table: string, key: Key, writes: readonly TransactItem[]): void {
  if (writes.length > MAX_TEAM_ITEMS) {
    throw new TransactionLimitError(
      `${writes.length} writes for one event: at most ${MAX_TEAM_ITEMS} fit beside the marker`,
    );
  }
  // An estimate on the request's JSON (bigints, sets and bytes sized as written), not DynamoDB's item sizes.
  const bytes = utf8(JSON.stringify(writes, sizedValue)).length;
  if (bytes > MAX_TRANSACTION_BYTES) {
    throw new TransactionLimitError(
      `the writes for one event are about ${bytes} bytes: a transaction holds 4 MB`,
    );
  }
  // One transaction cannot act on one item twice (AWS: "no two actions can target the same item").
  // A Put names its whole item, so it is compared on the keys the other writes name.
  const keyed = [{ table: tableName(table), key }];
  for (const write of writes) {
    const target = write.Put ?? write.Update ?? write.Delete ?? write.ConditionCheck;
    const name = tableName(target?.TableName ?? '');
    const own: Key | undefined = write.Put ? undefined : ((target as { Key?: Key }).Key ?? {});
    const clash = keyed.find(
      (other) =>
        other.table === name &&
        Object.entries(other.key).every(
          ([attribute, value]) => (own ?? write.Put?.Item)?.[attribute] === value,
        ) &&
        (own === undefined || Object.keys(own).length === Object.keys(other.key).length),
    );
    if (clash !== undefined) {
      throw new TransactionLimitError(
        `${clash === keyed[0] ? 'a write targets the marker item' : 'two writes target one item'}: one transaction cannot write an item twice`,
      );
    }
    if (own !== undefined) keyed.push({ table: name, key: own });
  }
}

/** A table's name, given as a name or an ARN (`arn:…:table/<name>`). */
function tableName(table: string): string {
  const at = table.indexOf(':table/');
  return at === -1 ? table : table.slice(at + ':table/'.length);
}

function sizedValue(_: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Set) return [...value];
  if (value instanceof Uint8Array) return 'x'.repeat(value.byteLength);
  return value;
}

/**
 * By name, not instanceof: a second copy of the DynamoDB client in a bundle would make instanceof
 * fail silently and turn every duplicate into a failure.
 */
function isCancellation(error: unknown): error is TransactionCanceledException {
  return error instanceof Error && error.name === 'TransactionCanceledException';
}

/** A failed send in one line; a cancellation by its reasons' codes, in the order of the items. */
export function describeFailure(error: unknown): string {
  if (isCancellation(error)) {
    return `transaction cancelled [${(error.CancellationReasons ?? []).map((r) => r.Code ?? 'None').join(', ')}]`;
  }
  return describeError(error);
}

import { type DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSRecord } from 'aws-lambda';
import {
  appliedOnBalanceAttribute,
  appliedOnBalanceEntry,
  balanceKey,
  type Delivery,
  partitionKey,
  TTL_ATTRIBUTE,
} from '../../contract/ledger-keys.js';
import type { MessageBody } from '../../contract/message.js';
import { instrumentClient, withMoreAttributes } from './instrumented-client.js';
import { expiresAt, type Ledger } from './ledger.js';
import { pendingWrites } from './pending-writes.js';

/**
 * The credit as a team ships it with at-least-once or at-most-once: ONE UpdateItem that adds the
 * amount to the account's balance. No transaction, no record of its own: a repeat credits again.
 */
export function creditUpdate(
  ledger: Pick<Ledger, 'tableName' | 'mode'>,
  message: MessageBody,
): UpdateCommandInput {
  return {
    TableName: ledger.tableName,
    Key: { pk: partitionKey(message.runId, ledger.mode), sk: balanceKey(message.accountId) },
    UpdateExpression: 'ADD balanceCents :amount',
    ExpressionAttributeValues: { ':amount': message.amountCents },
  };
}

/**
 * A client for the one-write credits that adds, to each credit it sends, the application the
 * verifier counts (contract/ledger-keys.ts, appliedOnBalanceAttribute), the account and the
 * evidence's TTL, in the same UpdateItem: the operation, the key and the condition are the
 * consumer's, so a conditional credit that writes nothing records nothing. `applying` names the
 * record whose credit comes next (records are worked in order) and returns its balance key; `after`
 * sees each answer, the record it was for included.
 */
export function appliedOnBalanceClient(
  ledger: Ledger,
  context: Pick<Context, 'awsRequestId'>,
  records: readonly SQSRecord[],
  after?: (
    applying: { readonly message: MessageBody; readonly delivery: Delivery } | undefined,
    error?: unknown,
  ) => Promise<void>,
): {
  readonly ddb: DynamoDBDocumentClient;
  applying(message: MessageBody, record: SQSRecord): { pk: string; sk: string };
} {
  const pending = pendingWrites(context, records);
  const ddb = instrumentClient(ledger.ddb, {
    before: (command) => {
      const applying = pending.of(command);
      if (applying === undefined) return undefined;
      const { message, delivery } = applying;
      const now = ledger.now?.() ?? Date.now();
      const entry = appliedOnBalanceEntry({
        receiveCount: delivery.receiveCount,
        appliedAtMs: now,
        amountCents: message.amountCents,
      });
      return new UpdateCommand(
        withMoreAttributes((command as UpdateCommand).input, {
          set: { accountId: message.accountId, [TTL_ATTRIBUTE]: expiresAt(ledger, now) },
          setExpressions: {
            [appliedOnBalanceAttribute(message.eventId)]: {
              expression: 'list_append(if_not_exists(#name, :none), :entry)',
              values: { ':none': [], ':entry': [entry] },
            },
          },
        }),
      );
    },
    after: async (command, error) => after?.(pending.of(command), error),
  });
  return {
    ddb,
    applying: (message, record) => {
      const { pk, sk } = creditUpdate(ledger, message).Key ?? {};
      return pending.naming({ pk: String(pk), sk: String(sk) }, message, record);
    },
  };
}

import { type DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import {
  appliedOnBalanceAttribute,
  appliedOnBalanceEntry,
  balanceKey,
  partitionKey,
  TTL_ATTRIBUTE,
} from '../../contract/ledger-keys.js';
import { instrumentClient, withMoreAttributes } from './instrumented-client.js';
import { expiresAt, type Ledger } from './ledger.js';
import { type MessageBody, receiveCountOf } from './message.js';

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
 * consumer's. `applying` names the record whose credit comes next; records are worked in order.
 */
export function appliedOnBalanceClient(ledger: Ledger): {
  readonly ddb: DynamoDBDocumentClient;
  applying(message: MessageBody, record: SQSRecord): void;
} {
  const pending = new Map<string, { readonly message: MessageBody; readonly record: SQSRecord }>();
  const keyOf = (pk: unknown, sk: unknown) => `${String(pk)}\0${String(sk)}`;
  const ddb = instrumentClient(ledger.ddb, {
    before: (command) => {
      if (!(command instanceof UpdateCommand)) return undefined;
      const key = command.input.Key;
      const applying = key === undefined ? undefined : pending.get(keyOf(key.pk, key.sk));
      if (applying === undefined) return undefined;
      const { message, record } = applying;
      const now = ledger.now?.() ?? Date.now();
      const entry = appliedOnBalanceEntry({
        receiveCount: receiveCountOf(record),
        appliedAtMs: now,
        amountCents: message.amountCents,
      });
      return new UpdateCommand(
        withMoreAttributes(command.input, {
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
  });
  return {
    ddb,
    applying: (message, record) => {
      const key = creditUpdate(ledger, message).Key ?? {};
      pending.set(keyOf(key.pk, key.sk), { message, record });
    },
  };
}

import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSRecord } from 'aws-lambda';
import type { Delivery } from '../../contract/ledger-keys.js';
import { deliveryOf } from './consumer.js';
import type { SentCommand } from './instrumented-client.js';
import type { MessageBody } from './message.js';

/**
 * Which record a core's UpdateItem is for, by the key the lab's key function gave it: the core
 * calls it per record, just before that record's write, and works records in order, so the latest
 * record named for a key is the one being written.
 */
export function pendingWrites(context: Pick<Context, 'awsRequestId'>, records: readonly SQSRecord[]) {
  const byKey = new Map<string, { readonly message: MessageBody; readonly delivery: Delivery }>();
  const keyOf = (key: Record<string, unknown> | undefined) => `${String(key?.pk)}\0${String(key?.sk)}`;
  return {
    /** Returns the key, having noted that `message` is the one written there next. */
    naming<K extends Record<string, string>>(key: K, message: MessageBody, record: SQSRecord): K {
      byKey.set(keyOf(key), { message, delivery: deliveryOf(record, context, records.indexOf(record)) });
      return key;
    },
    /** The message and delivery an UpdateItem the core sends is for, if it is one the lab named. */
    of(command: SentCommand) {
      return command instanceof UpdateCommand ? byKey.get(keyOf(command.input.Key)) : undefined;
    },
  };
}

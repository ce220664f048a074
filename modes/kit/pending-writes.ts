import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSRecord } from 'aws-lambda';
import { type Delivery, TTL_ATTRIBUTE } from '../../contract/ledger-keys.js';
import type { MessageBody } from '../../contract/message.js';
import { deliveryOf } from './consumer.js';
import { type SentCommand, withMoreAttributes } from './instrumented-client.js';
import { expiresAt, type Ledger } from './ledger.js';

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
    /** The message and delivery a write on `key` is for, if the lab named that key. */
    ofKey(key: Record<string, unknown> | undefined) {
      return key === undefined ? undefined : byKey.get(keyOf(key));
    },
    /** The message and delivery an UpdateItem the core sends is for, if it is one the lab named. */
    of(command: SentCommand) {
      return command instanceof UpdateCommand ? this.ofKey(command.input.Key) : undefined;
    },
    /**
     * A `before` hook for the client: a write the lab named carries the evidence's TTL too, the item
     * being the run's evidence as well (kept as long as the rest of it).
     */
    withEvidenceTtl(ledger: Pick<Ledger, 'now' | 'retention'>) {
      return (command: SentCommand): SentCommand | undefined =>
        this.of(command) === undefined
          ? undefined
          : new UpdateCommand(
              withMoreAttributes((command as UpdateCommand).input, {
                set: { [TTL_ATTRIBUTE]: expiresAt(ledger) },
              }),
            );
    },
  };
}

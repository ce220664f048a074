import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createEntryUpsertHandler } from '@sqs-delivery-semantics/consumer-cores/entry-upsert';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { COUNTERS, markerKey, partitionKey, TTL_ATTRIBUTE } from '../contract/ledger-keys.js';
import { type MessageBody, parseMessageBody, payloadHash } from '../contract/message.js';
import { type ConsumerDeps, countDeliveries, crashAfterApplying } from './kit/consumer.js';
import { instrumentClient, withMoreAttributes } from './kit/instrumented-client.js';
import { labMode } from './kit/lab-mode.js';
import { addToCounter, expiresAt } from './kit/ledger.js';
import { pendingWrites } from './kit/pending-writes.js';

/**
 * entry-upsert, as the lab runs it: the core (packages/consumer-cores/src/entry-upsert.ts: one entry per event,
 * keyed on its id, one UpdateItem) with the lab's keys (the run's partition, `APP#<eventId>`), so
 * the entry is the verifier's application record too (`applications` always 1, a repeat can never
 * read as a duplicate). From outside: `writes` (how many deliveries wrote it), the first receive
 * count and time, and the evidence's TTL added to the core's write; repeats counted through its
 * signals; the crash "after applying the message, before the batch is acknowledged" once the write
 * has answered.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const { ledger } = deps;
  const pending = pendingWrites(context, event.Records);
  const core = createEntryUpsertHandler<MessageBody>({
    ddb: instrumentClient(ledger.ddb, {
      before: (command) => {
        const entry = pending.of(command);
        if (entry === undefined) return undefined;
        const now = ledger.now?.() ?? Date.now();
        return new UpdateCommand(
          withMoreAttributes((command as UpdateCommand).input, {
            add: { writes: 1 },
            set: { eventId: entry.message.eventId, applications: 1, [TTL_ATTRIBUTE]: expiresAt(ledger, now) },
            setExpressions: {
              appliedAt: {
                expression: 'if_not_exists(#name, :at)',
                values: { ':at': new Date(now).toISOString() },
              },
              receiveCount: {
                expression: 'if_not_exists(#name, :receive)',
                values: { ':receive': entry.delivery.receiveCount },
              },
            },
          }),
        );
      },
      after: async (command, error) => {
        const entry = pending.of(command);
        if (entry !== undefined && error === undefined) {
          await crashAfterApplying(deps, entry.message, entry.delivery.receiveCount);
        }
      },
    }),
    table: ledger.tableName,
    parse: parseMessageBody,
    fingerprint: payloadHash,
    entryKey: (message, record) =>
      pending.naming(
        { pk: partitionKey(message.runId, ledger.mode), sk: markerKey(message.eventId) },
        message,
        record,
      ),
    entryOf: (message) => ({ accountId: message.accountId, amountCents: message.amountCents }),
    logger: deps.logger,
    signals: {
      repeat: (message) => addToCounter(ledger, message.runId, COUNTERS.suppressedDuplicates, 1),
    },
  });
  return core(event);
}

export const consumer = labMode({ mode: 'entry-upsert', needsFromEnvironment: () => ({}), processBatch });
export const { handler } = consumer;

import { createStateUpsertHandler } from '@sqs-delivery-semantics/consumer-cores/state-upsert';
import { storedVersion } from '@sqs-delivery-semantics/consumer-cores/version';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { InvalidMessageError } from '../contract/errors.js';
import { balanceKey, COUNTERS, partitionKey } from '../contract/ledger-keys.js';
import { type MessageBody, parseMessageBody } from '../contract/message.js';
import { type ConsumerDeps, countDeliveries, crashAfterApplying } from './kit/consumer.js';
import { upsertEventRecord } from './kit/event-record.js';
import { instrumentClient } from './kit/instrumented-client.js';
import { labMode } from './kit/lab-mode.js';
import { addToCounter } from './kit/ledger.js';
import { pendingWrites } from './kit/pending-writes.js';

/**
 * state-upsert, as the lab runs it: the core (packages/consumer-cores/src/state-upsert.ts: ONE conditional
 * UpdateItem of the account's state and version, written only over an older version) with the
 * lab's keys. The event carries the account's balance after it (`balanceAfterCents`) and its
 * position (`seq`).
 *
 * From outside, once the core's write has answered: the event's record for the verifier
 * (`APP#<eventId>`, `applications` always 1, `writes` counting the deliveries that wrote it, its
 * seq and state, whether the state was written or superseded), then the crash "after applying the
 * message, before the batch is acknowledged". It comes after the write, so it attests a state (or
 * a newer one) that is durable; a failure between the two leaves it missing, and the redelivery,
 * idempotent, writes it.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const { ledger } = deps;
  const pending = pendingWrites(context, event.Records);
  const core = createStateUpsertHandler<MessageBody & { balanceAfterCents: number }>({
    ddb: instrumentClient(ledger.ddb, {
      before: pending.withEvidenceTtl(ledger),
      after: async (command, error) => {
        const written = pending.of(command);
        if (written === undefined) return;
        const { message, delivery } = written;
        const conditionFailed = error instanceof Error && error.name === 'ConditionalCheckFailedException';
        if (error !== undefined && !conditionFailed) return;
        const superseded = conditionFailed && storedVersion(error) !== message.seq;
        const now = ledger.now?.() ?? Date.now();
        const outcome = await upsertEventRecord(deps, message, delivery, now, {
          set: { seq: message.seq, balanceAfterCents: message.balanceAfterCents ?? 0 },
          setOnce: { stateOutcome: superseded ? 'superseded' : 'written' },
        });
        // Counted once per event: on the delivery that first recorded it.
        if (outcome === 'applied' && superseded) {
          await addToCounter(ledger, message.runId, COUNTERS.superseded, 1);
        }
        await crashAfterApplying(deps, message, delivery.receiveCount);
      },
    }),
    table: ledger.tableName,
    parse: (body) => {
      const message = parseMessageBody(body);
      const { balanceAfterCents } = message;
      if (balanceAfterCents === undefined) {
        throw new InvalidMessageError('balanceAfterCents', 'is required by state-upsert (a state event)');
      }
      return { ...message, balanceAfterCents };
    },
    stateKey: (message, record) =>
      pending.naming(
        { pk: partitionKey(message.runId, ledger.mode), sk: balanceKey(message.accountId) },
        message,
        record,
      ),
    versionOf: (message) => message.seq,
    stateOf: (message) => ({ balanceCents: message.balanceAfterCents }),
    logger: deps.logger,
  });
  return core(event);
}

export const consumer = labMode({ mode: 'state-upsert', needsFromEnvironment: () => ({}), processBatch });
export const { handler } = consumer;

import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { balanceKey, partitionKey } from '../contract/ledger-keys.js';
import { createFifoVersionedHandler } from './core/fifo-versioned.js';
import { storedVersion } from './core/version.js';
import { requireEnv } from './shared/config.js';
import { type ConsumerDeps, countDeliveries, crashAfterApplying, lambdaHandler } from './shared/consumer.js';
import { upsertEventRecord } from './shared/event-record.js';
import { instrumentClient } from './shared/instrumented-client.js';
import { type MessageBody, parseMessageBody } from './shared/message.js';
import { pendingWrites } from './shared/pending-writes.js';

/**
 * fifo-versioned, as the lab runs it: the core (functions/core/fifo-versioned.ts: a FIFO queue,
 * one group per account; ONE conditional UpdateItem adds the amount and sets `version` to the
 * event's seq only if the account is at seq − 1; a gap fails the rest of the group and releases it
 * at once) with the lab's keys.
 *
 * From outside, once the core's credit has answered (applied, or a repeat its version shows): the
 * event's record for the verifier (`APP#<eventId>`, applications 1), then the crash "after applying
 * the message, before the batch is acknowledged". It comes after the credit, so it attests a durable
 * one: a failure between the two leaves it missing, and the redelivery, finding its own version,
 * writes it.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
  queueUrl: string,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const { ledger } = deps;
  const pending = pendingWrites(context, event.Records);
  const core = createFifoVersionedHandler<MessageBody>({
    ddb: instrumentClient(ledger.ddb, {
      before: pending.withEvidenceTtl(ledger),
      after: async (command, error) => {
        const credited = pending.of(command);
        if (credited === undefined) return;
        const { message, delivery } = credited;
        const conditionFailed = error instanceof Error && error.name === 'ConditionalCheckFailedException';
        const repeat = conditionFailed && message.seq <= (storedVersion(error) ?? 0);
        if (error !== undefined && !repeat) return;
        await upsertEventRecord(deps, message, delivery, ledger.now?.() ?? Date.now(), {
          set: { seq: message.seq },
        });
        await crashAfterApplying(deps, message, delivery.receiveCount);
      },
    }),
    table: ledger.tableName,
    sqs: deps.sqs,
    queueUrl,
    parse: parseMessageBody,
    key: (message, record) =>
      pending.naming(
        { pk: partitionKey(message.runId, ledger.mode), sk: balanceKey(message.accountId) },
        message,
        record,
      ),
    seqOf: (message) => message.seq,
    deltasOf: (message) => ({ balanceCents: message.amountCents }),
    logger: deps.logger,
  });
  return core(event);
}

const queueUrl = requireEnv('QUEUE_URL');
export const handler = lambdaHandler('fifo-versioned', (event, context, deps) =>
  processBatch(event, context, deps, queueUrl),
);

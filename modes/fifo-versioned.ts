import { createFifoVersionedHandler } from '@sqs-delivery-semantics/consumer-cores/fifo-versioned';
import { storedVersion } from '@sqs-delivery-semantics/consumer-cores/version';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { requireEnv } from '../contract/config.js';
import { COUNTERS } from '../contract/ledger-keys.js';
import { type MessageBody, parseMessageBody } from '../contract/message.js';
import { appliedOnBalanceClient } from './kit/applied-on-balance.js';
import { countDeliveries, crashAfterApplying } from './kit/consumer.js';
import { labMode, type ModeDeps } from './kit/lab-mode.js';
import { addToCounter } from './kit/ledger.js';

/**
 * fifo-versioned, as the lab runs it: the core (packages/consumer-cores/src/fifo-versioned.ts: a FIFO queue,
 * one group per account; ONE conditional UpdateItem adds the amount and sets `version` to the
 * event's seq only if the account is at seq − 1; a gap fails the rest of the group and releases it
 * at once) with the lab's keys.
 *
 * From outside: the application added to the core's own conditional UpdateItem
 * (appliedOnBalanceClient), so it is written exactly when the credit is, at the credit's time, and
 * a repeat (the condition fails) writes neither. Then, once the credit has answered (applied, or a
 * repeat its version shows), the crash "after applying the message, before the batch is
 * acknowledged". A separate record written after the credit would leave a window: an event
 * dead-lettered between the two, and redriven after its successors, would be recorded after them.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ModeDeps<'fifo-versioned'>,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const { ledger } = deps;
  const credits = appliedOnBalanceClient(ledger, context, event.Records, async (credited, error) => {
    if (credited === undefined) return;
    const { message, delivery } = credited;
    const conditionFailed = error instanceof Error && error.name === 'ConditionalCheckFailedException';
    const repeat = conditionFailed && message.seq <= (storedVersion(error) ?? 0);
    if (error !== undefined && !repeat) return;
    await crashAfterApplying(deps, message, delivery.receiveCount);
  });
  const core = createFifoVersionedHandler<MessageBody>({
    ddb: credits.ddb,
    table: ledger.tableName,
    sqs: deps.sqs,
    queueUrl: deps.queueUrl,
    parse: parseMessageBody,
    key: (message, record) => credits.applying(message, record),
    seqOf: (message) => message.seq,
    deltasOf: (message) => ({ balanceCents: message.amountCents }),
    logger: deps.logger,
    signals: {
      repeat: (message) => addToCounter(ledger, message.runId, COUNTERS.suppressedDuplicates, 1),
    },
  });
  return core(event);
}

export const consumer = labMode({
  mode: 'fifo-versioned',
  needsFromEnvironment: () => ({ queueUrl: requireEnv('QUEUE_URL') }),
  processBatch,
});
export const { handler } = consumer;

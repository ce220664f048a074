import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createAtLeastOnceHandler } from './core/at-least-once.js';
import { readConsumerConfig } from './shared/config.js';
import { type ConsumerDeps, countDeliveries, createConsumerDeps, deliveryOf } from './shared/consumer.js';
import { creditAccount } from './shared/ledger.js';
import { type MessageBody, parseMessageBody, receiveCountOf } from './shared/message.js';

/**
 * at-least-once, as the lab runs it: the core (functions/core/at-least-once.ts: work, then partial
 * batch response) with the lab's work, which credits the account and records the application, and
 * the crash "after applying the message, before the batch is acknowledged" drawn after it. A crash
 * there redelivers messages that were already applied: duplicates.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const core = createAtLeastOnceHandler<MessageBody>({
    parse: parseMessageBody,
    logger: deps.logger,
    work: async (message, record) => {
      const delivery = deliveryOf(record, context, event.Records.indexOf(record));
      await creditAccount(deps.ledger, message, delivery, { idempotent: false });
      await deps.crash.maybeCrash({
        runId: message.runId,
        key: message.eventId,
        receiveCount: receiveCountOf(record),
        where: 'after applying the message, before the batch is acknowledged',
      });
    },
  });
  return core(event);
}

const deps = createConsumerDeps(readConsumerConfig('at-least-once'));

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  deps.logger.addContext(context);
  return processBatch(event, context, deps);
};

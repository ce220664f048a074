import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createAtLeastOnceHandler } from '@sqs-delivery-semantics/consumer-cores/at-least-once';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type MessageBody, parseMessageBody, receiveCountOf } from '../contract/message.js';
import { appliedOnBalanceClient, creditUpdate } from './kit/applied-on-balance.js';
import { type ConsumerDeps, countDeliveries, crashAfterApplying } from './kit/consumer.js';
import { labMode } from './kit/lab-mode.js';

/**
 * at-least-once, as the lab runs it: the core (packages/consumer-cores/src/at-least-once.ts: work, then partial
 * batch response) with the work a team ships, one UpdateItem crediting the account. From outside:
 * the application added to that same write (appliedOnBalanceClient), and the crash "after applying
 * the message, before the batch is acknowledged" once the credit has answered. A crash there
 * redelivers messages that were already applied: duplicates. So does a lost response, which the
 * SDK sends again: an UpdateItem carries no idempotency token.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const credits = appliedOnBalanceClient(deps.ledger, context, event.Records);
  const core = createAtLeastOnceHandler<MessageBody>({
    parse: parseMessageBody,
    logger: deps.logger,
    work: async (message, record) => {
      credits.applying(message, record);
      await credits.ddb.send(new UpdateCommand(creditUpdate(deps.ledger, message)));
      await crashAfterApplying(deps, message, receiveCountOf(record));
    },
  });
  return core(event);
}

export const consumer = labMode({ mode: 'at-least-once', needsFromEnvironment: () => ({}), processBatch });
export const { handler } = consumer;

import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readConsumerConfig } from './shared/config.js';
import { type ConsumerDeps, createConsumerDeps } from './shared/consumer.js';
import { creditAccount } from './shared/ledger.js';
import { type ApplyMessage, workThenAcknowledge } from './shared/work-then-acknowledge.js';

/**
 * at-least-once: apply, then return so Lambda deletes the batch. A crash after the work and
 * before the acknowledgement redelivers messages that were already applied: duplicates.
 */
export const applyAtLeastOnce: ApplyMessage = (deps, message, delivery) =>
  creditAccount(deps.ledger, message, delivery, { idempotent: false });

export function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  return workThenAcknowledge(event, context, deps, applyAtLeastOnce);
}

const deps = createConsumerDeps(readConsumerConfig('at-least-once'));

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  deps.logger.addContext(context);
  return processBatch(event, context, deps);
};

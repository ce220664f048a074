import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createEffectivelyOnceHandler } from './core/effectively-once.js';
import { readConsumerConfig } from './shared/config.js';
import { type ConsumerDeps, countDeliveries, createConsumerDeps } from './shared/consumer.js';
import { creditBalance, markerLab } from './shared/marker-lab.js';

/**
 * effectively-once, as the lab runs it: the core (functions/core/effectively-once.ts: the marker
 * and the team's writes in ONE conditional transaction) with the lab's write, credit the account,
 * and the lab's keys and instruments around it (functions/shared/marker-lab.ts). A redelivery after
 * a crash finds the marker, the transaction is cancelled with ConditionalCheckFailed, and the
 * message is skipped: delivered more than once, applied exactly once.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const lab = markerLab(deps, context, event);
  const core = createEffectivelyOnceHandler({
    ...lab.options,
    writesFor: (message) => [creditBalance(deps.ledger, message)],
  });
  return core(event);
}

const deps = createConsumerDeps(readConsumerConfig('effectively-once'));

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  deps.logger.addContext(context);
  return processBatch(event, context, deps);
};

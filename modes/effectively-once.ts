import { createEffectivelyOnceHandler } from '@sqs-delivery-semantics/consumer-cores/effectively-once';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type ConsumerDeps, countDeliveries } from './kit/consumer.js';
import { labMode } from './kit/lab-mode.js';
import { creditBalance, markerLab } from './kit/marker-lab.js';

/**
 * effectively-once, as the lab runs it: the core (packages/consumer-cores/src/effectively-once.ts: the marker
 * and the team's writes in ONE conditional transaction) with the lab's write, credit the account,
 * and the lab's keys and instruments around it (modes/kit/marker-lab.ts). A redelivery after
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

export const consumer = labMode({ mode: 'effectively-once', needsFromEnvironment: () => ({}), processBatch });
export const { handler } = consumer;

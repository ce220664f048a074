import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deleteRecords } from './core/delete-records.js';
import { readConsumerConfig, requireEnv } from './shared/config.js';
import {
  type ConsumerDeps,
  countDeliveries,
  createConsumerDeps,
  deliveryOf,
  logRecordFailure,
} from './shared/consumer.js';
import { DeleteFailedError, InvalidMessageError } from './shared/errors.js';
import { creditAccount } from './shared/ledger.js';
import { readMessageBody, receiveCountOf, recordAttribution, runIdOf } from './shared/message.js';

/**
 * at-most-once: delete the received batch from SQS first, then apply each message. A crash (or a
 * failed write) after the delete loses the messages not yet applied: SQS no longer has them and
 * nobody will retry them. It applies each *delivery* at most once, not each event: SQS and the event
 * source mapping are at-least-once themselves (a message can come back after it was deleted, or be
 * in two invocations when one outlives the visibility timeout, and a delete with a stale receipt
 * handle succeeds without deleting), and a producer re-send is a second message. Every such second
 * delivery is applied too.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
  queueUrl: string,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const { deleted, notDeleted } = await deleteRecords(deps.sqs, queueUrl, event.Records);
  for (const { position, reason } of notDeleted) {
    // Not applied by this delivery: redelivered, or lost if the delete took effect after all.
    deps.logger.warn('not deleted, so not applied', {
      messageId: event.Records[position]?.messageId,
      reason,
    });
  }

  for (const position of deleted) {
    const record = event.Records[position];
    if (record === undefined) continue;
    const message = readMessageBody(record.body);
    await deps.crash.maybeCrash({
      // A poison body still names its run and event through the producer's message attributes.
      ...(message instanceof InvalidMessageError
        ? { runId: runIdOf(record), key: recordAttribution(record).eventId ?? record.messageId }
        : { runId: message.runId, key: message.eventId }),
      receiveCount: receiveCountOf(record),
      where: 'after the batch was deleted, before applying the message',
    });
    try {
      if (message instanceof InvalidMessageError) throw message;
      await creditAccount(deps.ledger, message, deliveryOf(record, context, position), { idempotent: false });
    } catch (error) {
      logRecordFailure(
        deps,
        record,
        error,
        'LOST: at-most-once deleted it before the work, nothing will retry it',
      );
    }
  }

  // Failing the invocation makes Lambda keep the undeleted records, so SQS redelivers them; the
  // ones deleted above are gone either way. Partial batch responses are off for this mode.
  if (notDeleted.length > 0) {
    throw new DeleteFailedError(
      notDeleted.map(({ position }) => event.Records[position]?.messageId ?? String(position)),
    );
  }
  return { batchItemFailures: [] };
}

const queueUrl = requireEnv('QUEUE_URL');
const deps = createConsumerDeps(readConsumerConfig('at-most-once'));

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  deps.logger.addContext(context);
  return processBatch(event, context, deps, queueUrl);
};

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createAtMostOnceHandler } from '@sqs-delivery-semantics/consumer-cores/at-most-once';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { requireEnv } from '../contract/config.js';
import { parseMessageBody, receiveCountOf, recordAttribution, runIdOf } from '../contract/message.js';
import { appliedOnBalanceClient, creditUpdate } from './kit/applied-on-balance.js';
import { countDeliveries } from './kit/consumer.js';
import { labMode, type ModeDeps } from './kit/lab-mode.js';

/**
 * at-most-once, as the lab runs it: the core (packages/consumer-cores/src/at-most-once.ts: delete the batch,
 * then work) with the work a team would ship, one UpdateItem crediting the account, its
 * application added to that write from outside (appliedOnBalanceClient). The crash "after the batch
 * was deleted, before applying the message" is drawn for each deleted record as the core reads it
 * (through the parse it is given), so a poison record can draw it too: everything not yet applied
 * is lost. Its work writes with a client that makes one attempt (`workDdb`): with the SDK's
 * default retries, a credit whose response was lost is sent again and applied twice, and the
 * pattern would not even be at most once (`npm run explore` shows the cells).
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ModeDeps<'at-most-once'>,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const credits = appliedOnBalanceClient({ ...deps.ledger, ddb: deps.workDdb }, context, event.Records);
  const core = createAtMostOnceHandler({
    sqs: deps.sqs,
    queueUrl: deps.queueUrl,
    logger: deps.logger,
    parse: async (body, record) => {
      // A poison body still names its run and event through the producer's message attributes.
      const attribution = recordAttribution(record);
      await deps.crash.maybeCrash({
        runId: runIdOf(record),
        key: attribution.eventId ?? record.messageId,
        receiveCount: receiveCountOf(record),
        where: 'after the batch was deleted, before applying the message',
      });
      return parseMessageBody(body);
    },
    work: async (message, record) => {
      credits.applying(message, record);
      await credits.ddb.send(new UpdateCommand(creditUpdate(deps.ledger, message)));
    },
  });
  return core(event);
}

export const consumer = labMode({
  mode: 'at-most-once',
  needsFromEnvironment: () => ({
    queueUrl: requireEnv('QUEUE_URL'),
    // One attempt per write: the SDK's retry of a credit whose answer was lost would credit twice.
    workDdb: DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts: 1 })),
  }),
  processBatch,
});
export const { handler } = consumer;

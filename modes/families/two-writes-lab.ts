import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { markerKey, partitionKey, TTL_ATTRIBUTE } from '../../contract/ledger-keys.js';
import { type MessageBody, parseMessageBody, receiveCountOf } from '../../contract/message.js';
import { appliedOnBalanceClient, creditUpdate } from '../kit/applied-on-balance.js';
import { type ConsumerDeps, countDeliveries } from '../kit/consumer.js';
import { instrumentClient } from '../kit/instrumented-client.js';
import { labMode } from '../kit/lab-mode.js';
import { expiresAt } from '../kit/ledger.js';
import { createTwoWritesHandler, type TwoWritesOrder } from '../teaching/two-writes.js';

/** Where each teaching mode's crash lands: between its two writes, after the first has answered. */
export const TWO_WRITES_CRASH_POINTS: Readonly<Record<TwoWritesOrder, string>> = {
  'marker-then-credit': 'after the marker was written, before the credit',
  'credit-then-marker': 'after the credit, before the marker was written',
};

/**
 * A teaching mode (modes/teaching/two-writes.ts) as the lab runs it: the credit's application
 * rides on the credit itself (appliedOnBalanceClient), so a marker alone is never evidence of a
 * credit; the marker carries the evidence's TTL; the crash is drawn once the first of the two
 * writes has answered.
 */
export function twoWritesBatch(order: TwoWritesOrder) {
  return async (
    event: SQSEvent,
    context: Pick<Context, 'awsRequestId'>,
    deps: ConsumerDeps,
  ): Promise<SQSBatchResponse> => {
    await countDeliveries(deps, event.Records);
    const { ledger } = deps;
    const crashAfter = (message: MessageBody, receiveCount: number) =>
      deps.crash.maybeCrash({
        runId: message.runId,
        key: message.eventId,
        receiveCount,
        where: TWO_WRITES_CRASH_POINTS[order],
      });
    const credits = appliedOnBalanceClient(ledger, context, event.Records, async (applying, error) => {
      if (order === 'credit-then-marker' && applying !== undefined && error === undefined) {
        await crashAfter(applying.message, applying.delivery.receiveCount);
      }
    });
    const records = new Map(event.Records.map((record) => [record.messageId, record]));
    let current: { message: MessageBody; receiveCount: number } | undefined;
    const ddb = instrumentClient(credits.ddb, {
      before: (command) =>
        command instanceof PutCommand
          ? new PutCommand({
              ...command.input,
              Item: { ...command.input.Item, [TTL_ATTRIBUTE]: expiresAt(ledger) },
            })
          : undefined,
      after: async (command, error) => {
        if (
          order === 'marker-then-credit' &&
          command instanceof PutCommand &&
          error === undefined &&
          current
        ) {
          await crashAfter(current.message, current.receiveCount);
        }
      },
    });
    const core = createTwoWritesHandler<MessageBody>({
      order,
      ddb,
      table: ledger.tableName,
      parse: (body, record) => {
        const message = parseMessageBody(body);
        current = { message, receiveCount: receiveCountOf(records.get(record.messageId) ?? record) };
        return message;
      },
      markerKey: (message) => ({
        pk: partitionKey(message.runId, ledger.mode),
        sk: markerKey(message.eventId),
      }),
      credit: (message, record) => {
        credits.applying(message, record);
        return creditUpdate(ledger, message);
      },
      logger: deps.logger,
    });
    return core(event);
  };
}

export function twoWritesMode<M extends TwoWritesOrder>(mode: M) {
  return labMode<M>({ mode, needsFromEnvironment: () => ({}), processBatch: twoWritesBatch(mode) });
}

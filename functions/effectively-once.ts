import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { balanceKey, COUNTERS, markerKey, partitionKey, TTL_ATTRIBUTE } from '../contract/ledger-keys.js';
import { createEffectivelyOnceHandler, type TransactItem } from './core/effectively-once.js';
import { readConsumerConfig } from './shared/config.js';
import { type ConsumerDeps, countDeliveries, createConsumerDeps, deliveryOf } from './shared/consumer.js';
import { instrumentClient, type SentCommand, withMoreAttributes } from './shared/instrumented-client.js';
import { addToCounter, expiresAt, type Ledger, recordRefusal } from './shared/ledger.js';
import { type MessageBody, parseMessageBody, payloadHash } from './shared/message.js';

/**
 * effectively-once, as the lab runs it: the core (functions/core/effectively-once.ts) with the
 * lab's writes (credit the account), its keys (one partition per run and mode, so runs share a
 * deployed table), and its instruments, all from outside the core:
 *
 * - the marker's evidence (the delivery, the account, `applications`) is added to the marker the
 *   core sends, never changing its operation or condition;
 * - the crash "after applying the message, before the batch is acknowledged" fires when the
 *   transaction has answered, before the core moves on;
 * - duplicates, refusals and retries are counted through the core's signals.
 */
export async function processBatch(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const { ledger, config, crash } = deps;
  const mode = ledger.mode;
  /** The delivery each marker sent in this invocation is for, by its key. */
  const deliveries = new Map<
    string,
    { readonly message: MessageBody; readonly evidence: Record<string, unknown> }
  >();
  const afterApplying = (message: MessageBody, receiveCount: number) =>
    crash.maybeCrash({
      runId: message.runId,
      key: message.eventId,
      receiveCount,
      where: 'after applying the message, before the batch is acknowledged',
    });
  const deliveryOfMarker = (command: SentCommand) => {
    if (!(command instanceof TransactWriteCommand)) return undefined;
    const key = command.input.TransactItems?.[0]?.Update?.Key;
    return key === undefined ? undefined : deliveries.get(`${key.pk}\0${key.sk}`);
  };

  const core = createEffectivelyOnceHandler<MessageBody>({
    ddb: instrumentClient(ledger.ddb, {
      before: (command) => {
        const delivery = deliveryOfMarker(command);
        if (delivery === undefined) return undefined;
        const [marker, ...writes] = (command as TransactWriteCommand).input.TransactItems ?? [];
        if (marker?.Update === undefined) return undefined;
        const Update = withMoreAttributes(marker.Update, {
          add: { applications: 1 },
          set: { ...delivery.evidence, appliedAt: new Date(ledger.now?.() ?? Date.now()).toISOString() },
        });
        return new TransactWriteCommand({
          ...(command as TransactWriteCommand).input,
          TransactItems: [{ Update }, ...writes],
        });
      },
      after: async (command, error) => {
        const delivery = deliveryOfMarker(command);
        if (delivery !== undefined && error === undefined) {
          await afterApplying(delivery.message, Number(delivery.evidence.receiveCount));
        }
      },
    }),
    markerTable: ledger.tableName,
    parse: parseMessageBody,
    fingerprint: payloadHash,
    markerKey: (message, record) => {
      const key = { pk: partitionKey(message.runId, mode), sk: markerKey(message.eventId) };
      const delivery = deliveryOf(record, context, event.Records.indexOf(record));
      deliveries.set(`${key.pk}\0${key.sk}`, {
        message,
        evidence: {
          runId: message.runId,
          mode,
          eventId: message.eventId,
          accountId: message.accountId,
          amountCents: message.amountCents,
          messageId: delivery.messageId,
          receiveCount: delivery.receiveCount,
          requestId: delivery.requestId,
        },
      });
      return key;
    },
    writesFor: (message) => [creditBalance(ledger, message)],
    markerTtlSeconds: config.retention.markerTtlSeconds,
    // The item is the run's evidence too: kept as long as the run's other evidence.
    keepForSeconds: config.retention.evidenceTtlSeconds,
    ageGuard: config.ageGuard
      ? { maxAgeSeconds: config.retention.maxEventAgeSeconds, skewSeconds: config.retention.marginSeconds }
      : false,
    ...(ledger.retry ? { retry: ledger.retry } : {}),
    ...(ledger.now ? { clock: ledger.now } : {}),
    logger: deps.logger,
    signals: {
      duplicate: async (message, record) => {
        await addToCounter(ledger, message.runId, COUNTERS.suppressedDuplicates, 1);
        await afterApplying(message, deliveryOf(record, context, 0).receiveCount);
      },
      tooOld: (message, ageSeconds) => recordRefusal(ledger, message, ageSeconds),
      // Diagnostic only (hot keys): a lost counter update must not fail the record.
      retried: (message) =>
        addToCounter(ledger, message.runId, COUNTERS.retriedCancellations, 1).catch(() => undefined),
    },
  });
  return core(event);
}

/** The lab's own write for an event, the one a team swaps for its own: credit the account. */
export function creditBalance(ledger: Ledger, message: MessageBody): TransactItem {
  return {
    Update: {
      TableName: ledger.tableName,
      Key: { pk: partitionKey(message.runId, ledger.mode), sk: balanceKey(message.accountId) },
      UpdateExpression: 'ADD balanceCents :amount SET accountId = :account, #ttl = :ttl',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: {
        ':amount': message.amountCents,
        ':account': message.accountId,
        ':ttl': expiresAt(ledger),
      },
    },
  };
}

const deps = createConsumerDeps(readConsumerConfig('effectively-once'));

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  deps.logger.addContext(context);
  return processBatch(event, context, deps);
};

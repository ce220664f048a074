import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent } from 'aws-lambda';
import { balanceKey, COUNTERS, markerKey, partitionKey, TTL_ATTRIBUTE } from '../../contract/ledger-keys.js';
import type { Retention } from '../../contract/retention.js';
import type { EffectivelyOnceOptions, TransactItem } from '../core/effectively-once.js';
import { type ConsumerDeps, deliveryOf } from './consumer.js';
import { instrumentClient, type SentCommand, withMoreAttributes } from './instrumented-client.js';
import { addToCounter, expiresAt, type Ledger, recordRefusal } from './ledger.js';
import { type MessageBody, parseMessageBody, payloadHash } from './message.js';

/**
 * The lab around a marker core (effectively-once, and the charge modes' call-then-record), for one
 * invocation, all of it outside the core:
 * - its keys: one partition per run and mode, so runs share a deployed table;
 * - the marker's evidence (the delivery, the account, `applications`, a charge's id) added to the
 *   marker the core sends, never changing its operation or condition;
 * - the crash "after applying the message, before the batch is acknowledged" once the transaction
 *   has answered (or the duplicate it found is counted), before the core moves on;
 * - duplicates, refusals and retries counted through the core's signals.
 */
export function markerLab(
  deps: ConsumerDeps,
  context: Pick<Context, 'awsRequestId'>,
  event: SQSEvent,
  guard: Pick<Retention, 'maxEventAgeSeconds' | 'marginSeconds'> = deps.config.retention,
): {
  readonly options: Omit<EffectivelyOnceOptions<MessageBody>, 'writesFor'>;
  /** Adds attributes to the marker of `message`'s transaction (a charge's id). */
  readonly addToMarker: (message: MessageBody, attributes: Record<string, unknown>) => void;
} {
  const { ledger, config, crash } = deps;
  const mode = ledger.mode;
  const deliveries = new Map<string, { readonly message: MessageBody; evidence: Record<string, unknown> }>();
  const keyOf = (message: MessageBody) => ({
    pk: partitionKey(message.runId, mode),
    sk: markerKey(message.eventId),
  });
  const id = (key: { pk: unknown; sk: unknown }) => `${String(key.pk)}\0${String(key.sk)}`;
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
    return key === undefined ? undefined : deliveries.get(id({ pk: key.pk, sk: key.sk }));
  };
  const ddb = instrumentClient(ledger.ddb, {
    before: (command) => {
      const delivery = deliveryOfMarker(command);
      const [marker, ...writes] = (command as TransactWriteCommand).input?.TransactItems ?? [];
      if (delivery === undefined || marker?.Update === undefined) return undefined;
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
  });
  return {
    options: {
      ddb,
      markerTable: ledger.tableName,
      parse: parseMessageBody,
      fingerprint: payloadHash,
      markerKey: (message, record) => {
        const key = keyOf(message);
        const delivery = deliveryOf(record, context, event.Records.indexOf(record));
        deliveries.set(id(key), {
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
      markerTtlSeconds: config.retention.markerTtlSeconds,
      // The item is the run's evidence too: kept as long as the run's other evidence.
      keepForSeconds: config.retention.evidenceTtlSeconds,
      ageGuard: config.ageGuard
        ? { maxAgeSeconds: guard.maxEventAgeSeconds, skewSeconds: guard.marginSeconds }
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
    },
    addToMarker: (message, attributes) => {
      const delivery = deliveries.get(id(keyOf(message)));
      if (delivery) delivery.evidence = { ...delivery.evidence, ...attributes };
    },
  };
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

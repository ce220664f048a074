import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type {
  EffectivelyOnceOptions,
  TransactItem,
} from '@sqs-delivery-semantics/consumer-cores/effectively-once';
import type { Context, SQSEvent } from 'aws-lambda';
import { balanceKey, COUNTERS, markerKey, partitionKey, TTL_ATTRIBUTE } from '../../contract/ledger-keys.js';
import { type MessageBody, parseMessageBody, payloadHash, receiveCountOf } from '../../contract/message.js';
import type { Retention } from '../../contract/retention.js';
import { type ConsumerDeps, crashAfterApplying } from './consumer.js';
import { instrumentClient, type SentCommand, withMoreAttributes } from './instrumented-client.js';
import { addToCounter, expiresAt, type Ledger, recordRefusal } from './ledger.js';
import { pendingWrites } from './pending-writes.js';

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
  const { ledger, config } = deps;
  const mode = ledger.mode;
  const pending = pendingWrites(context, event.Records);
  /** What the lab learnt of an event beyond its delivery (a charge's id), for its marker. */
  const extras = new Map<string, Record<string, unknown>>();
  const afterApplying = (message: MessageBody, receiveCount: number) =>
    crashAfterApplying(deps, message, receiveCount);
  const deliveryOfMarker = (command: SentCommand) =>
    command instanceof TransactWriteCommand
      ? pending.ofKey(command.input.TransactItems?.[0]?.Update?.Key)
      : undefined;
  const ddb = instrumentClient(ledger.ddb, {
    before: (command) => {
      const written = deliveryOfMarker(command);
      const [marker, ...writes] = (command as TransactWriteCommand).input?.TransactItems ?? [];
      if (written === undefined || marker?.Update === undefined) return undefined;
      const { message, delivery } = written;
      const Update = withMoreAttributes(marker.Update, {
        add: { applications: 1 },
        set: {
          runId: message.runId,
          mode,
          eventId: message.eventId,
          accountId: message.accountId,
          amountCents: message.amountCents,
          messageId: delivery.messageId,
          receiveCount: delivery.receiveCount,
          requestId: delivery.requestId,
          ...extras.get(message.eventId),
          appliedAt: new Date(ledger.now?.() ?? Date.now()).toISOString(),
        },
      });
      return new TransactWriteCommand({
        ...(command as TransactWriteCommand).input,
        TransactItems: [{ Update }, ...writes],
      });
    },
    after: async (command, error) => {
      const written = deliveryOfMarker(command);
      if (written !== undefined && error === undefined) {
        await afterApplying(written.message, written.delivery.receiveCount);
      }
    },
  });
  return {
    options: {
      ddb,
      markerTable: ledger.tableName,
      parse: parseMessageBody,
      fingerprint: payloadHash,
      markerKey: (message, record) =>
        pending.naming(
          { pk: partitionKey(message.runId, mode), sk: markerKey(message.eventId) },
          message,
          record,
        ),
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
          await afterApplying(message, receiveCountOf(record));
        },
        tooOld: (message, ageSeconds) => recordRefusal(ledger, message, ageSeconds),
        // Diagnostic only (hot keys): a lost counter update must not fail the record.
        retried: (message) =>
          addToCounter(ledger, message.runId, COUNTERS.retriedCancellations, 1).catch(() => undefined),
      },
    },
    addToMarker: (message, attributes) => {
      extras.set(message.eventId, { ...extras.get(message.eventId), ...attributes });
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

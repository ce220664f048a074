import { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { requireEnv } from '../../contract/config.js';
import { ConfigError, describeError } from '../../contract/errors.js';
import { createLogger } from '../../contract/logger.js';
import { isFifoMode, isMode } from '../../contract/topology.js';
import {
  type OutboxMessage,
  type OutboxTarget,
  outboxMessageOf,
  PublishError,
  publishOutboxMessages,
} from './outbox.js';

/**
 * The outbox relay on AWS: Lambda's DynamoDB Streams event source mapping hands it the outbox
 * table's records in order per shard, and checkpoints after a successful return. It publishes each
 * inserted outbox item to every mode's queue (QUEUE_URLS) with the embedded relay's publish
 * (services/outbox/outbox.ts), and reports the first record not published everywhere, so the
 * mapping retries from there (ReportBatchItemFailures): what was sent before it stays sent, what
 * follows is sent again. At least once, in order; a FIFO queue drops the re-sends by deduplication id.
 */

export interface RelayDeps {
  readonly sqs: SQSClient;
  readonly targets: readonly OutboxTarget[];
  readonly logger: Pick<ReturnType<typeof createLogger>, 'error' | 'info'>;
}

/** QUEUE_URLS: `{"<mode>": "<queue url>", …}`; a FIFO mode's URL must be a `.fifo` queue's. */
export function readTargets(env: Readonly<Record<string, string | undefined>> = process.env): OutboxTarget[] {
  const raw = requireEnv('QUEUE_URLS', env);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(`QUEUE_URLS must be JSON ({"<mode>": "<queue url>"}), got ${raw.slice(0, 200)}`);
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    Object.keys(parsed).length === 0
  ) {
    throw new ConfigError('QUEUE_URLS must be a non-empty JSON object of mode → queue URL');
  }
  return Object.entries(parsed).map(([mode, queueUrl]) => {
    if (!isMode(mode)) throw new ConfigError(`QUEUE_URLS names ${mode}, which is not a mode of the topology`);
    if (typeof queueUrl !== 'string' || queueUrl === '') {
      throw new ConfigError(`QUEUE_URLS.${mode} must be a queue URL`);
    }
    const fifo = isFifoMode(mode);
    if (fifo !== queueUrl.endsWith('.fifo')) {
      throw new ConfigError(
        `QUEUE_URLS.${mode}: ${mode} is ${fifo ? '' : 'not '}a FIFO mode, but ${queueUrl} is ${fifo ? 'not ' : ''}a FIFO queue`,
      );
    }
    return { name: mode, queueUrl, fifo };
  });
}

/**
 * Publishes the batch's inserts in order. Returns the first record that did not reach every
 * queue (its sequence number), or none. A malformed outbox item stops the batch at itself: with
 * bisectBatchOnError and bounded retries, the mapping isolates it and hands it to the on-failure
 * destination instead of blocking the shard.
 */
export async function relayRecords(
  records: readonly DynamoDBRecord[],
  deps: RelayDeps,
): Promise<DynamoDBBatchResponse> {
  const messages: { readonly message: OutboxMessage; readonly record: DynamoDBRecord }[] = [];
  let stoppedAt: DynamoDBRecord | undefined;
  for (const record of records) {
    // Updates and TTL deletions of outbox items announce nothing.
    if (record.eventName !== 'INSERT') continue;
    try {
      messages.push({ message: outboxMessageOf(record.dynamodb?.NewImage), record });
    } catch (error) {
      deps.logger.error('outbox item not relayed: malformed', {
        sequenceNumber: record.dynamodb?.SequenceNumber,
        error: describeError(error),
      });
      stoppedAt = record;
      break;
    }
  }
  try {
    await publishOutboxMessages(
      deps.sqs,
      deps.targets,
      messages.map(({ message }) => message),
    );
  } catch (error) {
    if (!(error instanceof PublishError)) throw error;
    const failed = messages[error.firstUnpublished]?.record;
    deps.logger.error('outbox items not published to every queue; retried from the first', {
      sequenceNumber: failed?.dynamodb?.SequenceNumber,
      error: describeError(error),
    });
    stoppedAt = failed ?? stoppedAt;
  }
  if (stoppedAt === undefined) return { batchItemFailures: [] };
  const sequenceNumber = stoppedAt.dynamodb?.SequenceNumber;
  // Without a sequence number the mapping cannot tell where to resume: fail the whole batch.
  if (sequenceNumber === undefined) throw new Error('a failed stream record has no SequenceNumber');
  return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
}

const deps: RelayDeps = {
  sqs: new SQSClient({}),
  targets: readTargets(),
  logger: createLogger('outbox-relay'),
};

export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> =>
  relayRecords(event.Records, deps);

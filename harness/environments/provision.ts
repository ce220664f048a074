import {
  CreateTableCommand,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { EffectiveModeSettings } from '../../contract/deployment-settings.js';
import { TTL_ATTRIBUTE } from '../../contract/ledger-keys.js';
import { createPkSkTable } from '../../contract/pk-sk-table.js';
import { DEAD_LETTER_RETENTION_SECONDS, QUEUE_RETENTION_SECONDS } from '../../contract/retention.js';
import { isFifoMode, type Mode, queueNames, STORAGE } from '../../contract/topology.js';
import { PROVIDER_TTL_ATTRIBUTE } from '../../services/payment-provider/provider-table.js';

export interface ProvisionedQueues {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly deadLetterQueueUrl: string;
}

/**
 * Creates a mode's queue and DLQ as the stack does: redrive policy, retention, visibility timeout,
 * and for a FIFO mode both `.fifo`, with explicit deduplication ids and high throughput.
 */
export async function createModeQueues(
  sqs: SQSClient,
  mode: Mode,
  settings: Pick<EffectiveModeSettings, 'visibilityTimeoutSeconds' | 'maxReceiveCount'>,
  /** @default the stack's names (queueNames); the explorer's cells each have their own. */
  names = queueNames(mode),
): Promise<ProvisionedQueues> {
  const fifo = isFifoMode(mode) ? FIFO_ATTRIBUTES : {};
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: names.deadLetterQueue,
      Attributes: {
        ...fifo,
        MessageRetentionPeriod: String(DEAD_LETTER_RETENTION_SECONDS),
        MaximumMessageSize: String(STORAGE.maxMessageBytes),
      },
    }),
  );
  const deadLetterQueueUrl = required(dlq.QueueUrl, 'DLQ URL');
  const dlqArn = await queueArn(sqs, deadLetterQueueUrl);
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: names.queue,
      Attributes: {
        ...fifo,
        VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(QUEUE_RETENTION_SECONDS),
        MaximumMessageSize: String(STORAGE.maxMessageBytes),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn,
          maxReceiveCount: settings.maxReceiveCount,
        }),
      },
    }),
  );
  const queueUrl = required(queue.QueueUrl, 'queue URL');
  return { queueUrl, queueArn: await queueArn(sqs, queueUrl), deadLetterQueueUrl };
}

/**
 * A FIFO queue as the stack creates one: the producer sends explicit deduplication ids (the event
 * id), deduplicated and throttled per message group (high throughput). fauxqs stores the last two and
 * deduplicates queue-wide anyway, which explicit ids unique per event make the same.
 */
const FIFO_ATTRIBUTES = {
  FifoQueue: 'true',
  ContentBasedDeduplication: 'false',
  DeduplicationScope: 'messageGroup',
  FifoThroughputLimit: 'perMessageGroupId',
} as const;

/** The stack's three tables, by the names a local environment gives them. */
export interface StackTableNames {
  readonly ledger: string;
  readonly idempotency: string;
  readonly provider: string;
}

/** The names, with a prefix when several environments share one DynamoDB Local. */
export const stackTableNames = (prefix = ''): StackTableNames => ({
  ledger: `${prefix}ledger`,
  idempotency: `${prefix}idempotency`,
  provider: `${prefix}payment-provider`,
});

/**
 * The tables as the stack creates them. The provider's exists whatever the run's modes, as in the
 * stack, so the verifier can count any mode (a charge mode that did not run has no charges).
 */
export async function createStackTables(ddb: DynamoDBClient, tables: StackTableNames): Promise<void> {
  await createLedgerTable(ddb, tables.ledger);
  // One table for the modes that keep Powertools' idempotency records.
  await createIdempotencyTable(ddb, tables.idempotency);
  await createPkSkTable(ddb, tables.provider, { ttlAttribute: PROVIDER_TTL_ATTRIBUTE });
}

/** Creates the ledger table with the stack's key schema and TTL. */
export async function createLedgerTable(ddb: DynamoDBClient, tableName: string): Promise<void> {
  await createPkSkTable(ddb, tableName, { ttlAttribute: TTL_ATTRIBUTE });
}

/**
 * Creates the table Powertools' DynamoDBPersistenceLayer writes to, as the stack does: its default
 * partition key `id` and TTL attribute `expiration`.
 */
export async function createIdempotencyTable(ddb: DynamoDBClient, tableName: string): Promise<void> {
  await ddb.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  await waitUntilTableExists({ client: ddb, maxWaitTime: 30, minDelay: 1 }, { TableName: tableName });
  await ddb.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
    }),
  );
}

async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  return required(Attributes?.QueueArn, 'QueueArn');
}

function required(value: string | undefined, what: string): string {
  if (value === undefined) throw new Error(`the SQS emulator returned no ${what}`);
  return value;
}

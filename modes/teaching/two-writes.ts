import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { processInOrder } from '@sqs-delivery-semantics/consumer-cores/batch';
import type { ConsumerEvent, ParseEvent } from '@sqs-delivery-semantics/consumer-cores/event';
import type { ConsumerLogger } from '@sqs-delivery-semantics/consumer-cores/logger';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * DO NOT COPY: the mistake blog posts teach, kept so that `npm run explore` can show the exact
 * steps where it breaks. A processed-marker and the credit as TWO writes instead of one
 * transaction (packages/consumer-cores/src/effectively-once.ts is the one to copy):
 * - `marker-then-credit`: a conditional PutItem of the marker, then the credit. Anything that
 *   stops it between the two loses the event: its redelivery finds the marker and skips. So does
 *   a lost response to the marker's put, with no crash at all: the SDK's retry fails the put's own
 *   condition and the credit is skipped.
 * - `credit-then-marker`: read the marker, credit, then put the marker. Anything that stops it
 *   between the credit and the marker credits again on the redelivery.
 */
export type TwoWritesOrder = 'marker-then-credit' | 'credit-then-marker';

export interface TwoWritesOptions<E extends ConsumerEvent> {
  readonly order: TwoWritesOrder;
  readonly ddb: DynamoDBDocumentClient;
  readonly table: string;
  readonly parse: ParseEvent<E>;
  /** The marker's key (its partition key attribute comes first). */
  readonly markerKey: (event: E) => Record<string, string>;
  /** The credit: one UpdateItem. */
  readonly credit: (event: E, record: SQSRecord) => UpdateCommandInput;
  readonly logger: ConsumerLogger;
}

export function createTwoWritesHandler<E extends ConsumerEvent>(
  options: TwoWritesOptions<E>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const { ddb, table } = options;
  const markerFirst = async (event: E, record: SQSRecord) => {
    const Key = options.markerKey(event);
    const [partition] = Object.keys(Key);
    try {
      await ddb.send(
        new PutCommand({
          TableName: table,
          Item: { ...Key, markedAt: new Date().toISOString() },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': partition ?? 'pk' },
        }),
      );
    } catch (error) {
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') {
        options.logger.info('marker found: skipped as a duplicate', { eventId: event.eventId });
        return;
      }
      throw error;
    }
    await ddb.send(new UpdateCommand(options.credit(event, record)));
  };
  const creditFirst = async (event: E, record: SQSRecord) => {
    const Key = options.markerKey(event);
    const { Item } = await ddb.send(new GetCommand({ TableName: table, Key, ConsistentRead: true }));
    if (Item !== undefined) {
      options.logger.info('marker found: skipped as a duplicate', { eventId: event.eventId });
      return;
    }
    await ddb.send(new UpdateCommand(options.credit(event, record)));
    await ddb.send(
      new PutCommand({ TableName: table, Item: { ...Key, markedAt: new Date().toISOString() } }),
    );
  };
  const apply = options.order === 'marker-then-credit' ? markerFirst : creditFirst;
  return (event) =>
    processInOrder(
      event.Records,
      async (record) => apply(await options.parse(record.body, record), record),
      options.logger,
    );
}

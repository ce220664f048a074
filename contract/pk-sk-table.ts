import {
  CreateTableCommand,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';

/**
 * A pay-per-request table keyed `pk` (hash) and `sk` (range), as the stack's tables are: the
 * ledger, the payment provider's, the producing service's. `ifAbsent`: one that exists already
 * (several runs sharing one emulator, or two starters racing) is taken as it is.
 */
export async function createPkSkTable(
  ddb: DynamoDBClient,
  tableName: string,
  options: {
    readonly ttlAttribute?: string;
    readonly stream?: 'NEW_IMAGE';
    readonly ifAbsent?: boolean;
  } = {},
): Promise<void> {
  try {
    await ddb.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        ...(options.stream
          ? { StreamSpecification: { StreamEnabled: true, StreamViewType: options.stream } }
          : {}),
      }),
    );
  } catch (error) {
    if (!(options.ifAbsent && error instanceof Error && error.name === 'ResourceInUseException')) throw error;
    await waitUntilTableExists({ client: ddb, maxWaitTime: 30, minDelay: 1 }, { TableName: tableName });
    return;
  }
  await waitUntilTableExists({ client: ddb, maxWaitTime: 30, minDelay: 1 }, { TableName: tableName });
  if (options.ttlAttribute === undefined) return;
  await ddb.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: options.ttlAttribute, Enabled: true },
    }),
  );
}

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { chargeOf, type Mode } from '../../../contract/topology.js';
import { providerCharges } from '../../../verifier/verifier.js';
import { createStackTables, stackTableNames } from '../../environments/provision.js';
import { Teardown } from '../../environments/teardown.js';
import type { SharedDynamoDb } from '../../local-aws/emulators/dynamodb-emulator.js';
import { startEmulators } from '../../local-aws/emulators/index.js';
import { startPaymentProvider } from '../../local-aws/emulators/payment-provider.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION as REGION } from '../../local-aws/local-identity.js';
import type { ExploreEnvironment } from './explore.js';

export interface RunningExploreEnvironment extends ExploreEnvironment {
  stop(): Promise<void>;
}

/**
 * The emulators every cell shares (fauxqs in this process, DynamoDB Local), the stack's tables,
 * and the payment provider when a charge mode is explored. Cells keep apart by run id and queue.
 * `dynamodb`: a running DynamoDB Local to put the tables on (prefixed) and leave running, instead
 * of one of its own.
 */
export async function startExploreEnvironment(
  modes: readonly Mode[],
  dynamodb?: SharedDynamoDb,
): Promise<RunningExploreEnvironment> {
  const teardown = new Teardown('the explorer could not stop its environment cleanly');
  const tables = stackTableNames(dynamodb?.tablePrefix);
  try {
    const emulators = await teardown.whenStarted(startEmulators(dynamodb));
    const client = new DynamoDBClient({
      region: REGION,
      credentials: LOCAL_CREDENTIALS,
      endpoint: emulators.dynamodbEndpoint,
    });
    await createStackTables(client, tables);
    let provider: { readonly url: string } | undefined;
    if (modes.some((mode) => chargeOf(mode) !== undefined)) {
      provider = await teardown.whenStarted(
        startPaymentProvider({ dynamodbEndpoint: emulators.dynamodbEndpoint, tableName: tables.provider }),
      );
    }
    const sqs = new SQSClient({
      region: REGION,
      credentials: LOCAL_CREDENTIALS,
      endpoint: emulators.sqsEndpoint,
    });
    const ddb = DynamoDBDocumentClient.from(client);
    teardown.add(async () => {
      sqs.destroy();
      client.destroy();
    });
    return {
      region: REGION,
      credentials: LOCAL_CREDENTIALS,
      endpoints: { dynamodb: emulators.dynamodbEndpoint, sqs: emulators.sqsEndpoint },
      sqs,
      dynamodb: client,
      ddb,
      tableName: tables.ledger,
      idempotencyTableName: tables.idempotency,
      ...(provider
        ? {
            providerUrl: provider.url,
            charges: providerCharges(ddb, tables.provider),
          }
        : {}),
      stop: () => teardown.run(),
    };
  } catch (error) {
    await teardown.run().catch(() => undefined);
    throw error;
  }
}

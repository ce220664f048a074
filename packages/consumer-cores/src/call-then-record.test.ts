import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { createCallThenRecordHandler } from './call-then-record.js';
import { batch, memoryLogger, NOW, record } from './test/records.js';

const ddb = mockClient(DynamoDBDocumentClient);

describe('createCallThenRecordHandler', () => {
  const handler = (options: { keyRetentionSeconds?: number } = {}) => {
    const steps: string[] = [];
    ddb.reset();
    ddb.on(TransactWriteCommand).callsFake(() => void steps.push('record'));
    const consume = createCallThenRecordHandler<{ eventId: string; createdAt?: string }, string>({
      ddb: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
      markerTable: 'ledger',
      clock: () => NOW,
      logger: memoryLogger(),
      call: async (event) => {
        steps.push(`call ${event.eventId}`);
        return `ch_${event.eventId}`;
      },
      writesFor: (event, chargeId) => [
        { Put: { TableName: 'charges', Item: { pk: chargeId, eventId: event.eventId } } },
      ],
      ...options,
    });
    return { consume, steps };
  };

  it('calls first, then records the result with the marker in one transaction', async () => {
    const { consume, steps } = handler();

    await consume(batch(record({ eventId: 'e-1', createdAt: new Date(NOW - 1000).toISOString() })));

    expect(steps).toEqual(['call e-1', 'record']);
    const items = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems;
    expect(items?.[1]?.Put?.Item).toEqual({ pk: 'ch_e-1', eventId: 'e-1' });
  });

  it('refuses, before calling, an event older than the API remembers its key', async () => {
    const { consume, steps } = handler({ keyRetentionSeconds: 24 * 3600 });
    const old = record({ eventId: 'e-2', createdAt: new Date(NOW - 25 * 3600 * 1000).toISOString() });

    const response = await consume(batch(old));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: old.messageId }] });
    expect(steps).toEqual([]);
  });
});

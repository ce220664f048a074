import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAtLeastOnceHandler } from './at-least-once.js';
import { createAtMostOnceHandler } from './at-most-once.js';
import { createCallThenRecordHandler } from './call-then-record.js';
import { createEffectivelyOnceHandler } from './effectively-once.js';
import { createEntryUpsertHandler } from './entry-upsert.js';
import { createFifoVersionedHandler } from './fifo-versioned.js';
import { createStateUpsertHandler } from './state-upsert.js';
import { batch, record } from './test/records.js';

const ddbMock = mockClient(DynamoDBDocumentClient);
const sqsMock = mockClient(SQSClient);
const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
const sqs = new SQSClient({ region: 'eu-west-1' });
const queueUrl = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';

/** Each core with nothing but its own settings: no environment, no logger, no clock, default keys. */
const bare = {
  'at-least-once': createAtLeastOnceHandler({ work: async () => undefined }),
  'at-most-once': createAtMostOnceHandler({ sqs, queueUrl, work: async () => undefined }),
  'effectively-once': createEffectivelyOnceHandler({ ddb, markerTable: 'markers', writesFor: () => [] }),
  'call-then-record': createCallThenRecordHandler({
    ddb,
    markerTable: 'markers',
    call: async () => 'ok',
    writesFor: () => [],
  }),
  'entry-upsert': createEntryUpsertHandler({ ddb, table: 'entries', entryOf: () => ({ note: 'x' }) }),
  'state-upsert': createStateUpsertHandler({
    ddb,
    table: 'states',
    stateKey: (event) => ({ pk: event.eventId }),
    versionOf: () => 1,
    stateOf: () => ({ state: 'x' }),
  }),
  'fifo-versioned': createFifoVersionedHandler({
    ddb,
    table: 'items',
    sqs,
    queueUrl: `${queueUrl}.fifo`,
    key: (event) => ({ pk: event.eventId }),
    seqOf: () => 1,
    deltasOf: () => ({ count: 1 }),
  }),
};

describe('a core given nothing but its own settings', () => {
  beforeEach(() => {
    ddbMock.reset();
    sqsMock.reset();
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(TransactWriteCommand).resolves({});
    sqsMock.on(DeleteMessageBatchCommand).resolves({ Successful: [{ Id: '0' }], Failed: [] });
  });

  it.each(Object.entries(bare))('%s runs and acknowledges its record', async (_name, handler) => {
    const response = await handler(batch(record({ eventId: 'e-1', createdAt: new Date().toISOString() })));

    expect(response).toEqual({ batchItemFailures: [] });
  });
});

import { DeleteMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { createAtLeastOnceHandler } from './at-least-once.js';
import { createAtMostOnceHandler } from './at-most-once.js';
import { batch, memoryLogger, record } from './test/records.js';

const event = (eventId: string) => ({ eventId, createdAt: '2026-01-01T00:00:00.000Z' });

describe('createAtLeastOnceHandler', () => {
  it('works each record in order, and reports the ones whose work threw', async () => {
    const worked: string[] = [];
    const failing = record(event('e-2'));
    const handler = createAtLeastOnceHandler({
      logger: memoryLogger(),
      work: async (e) => {
        worked.push(e.eventId);
        if (e.eventId === 'e-2') throw new Error('throttled');
      },
    });

    const response = await handler(batch(record(event('e-1')), failing, record(event('e-3'))));

    expect(worked).toEqual(['e-1', 'e-2', 'e-3']);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
  });

  it('never works a body it cannot read, and says which field', async () => {
    const logger = memoryLogger();
    const bad = record({ amountCents: 1 });
    const handler = createAtLeastOnceHandler({ logger, work: async () => undefined });

    const response = await handler(batch(bad));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });
    expect(logger.lines[0]?.attributes).toMatchObject({ messageId: bad.messageId, field: 'eventId' });
  });
});

describe('createAtMostOnceHandler (the pattern to avoid)', () => {
  const sqs = mockClient(SQSClient);

  it('deletes the batch before any work, so a failed work is lost, not retried', async () => {
    sqs.reset();
    const order: string[] = [];
    sqs.on(DeleteMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => {
      order.push('delete');
      return { Successful: input.Entries.map(({ Id }) => ({ Id })), Failed: [] };
    });
    const handler = createAtMostOnceHandler({
      sqs: new SQSClient({ region: 'eu-west-1' }),
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders',
      logger: memoryLogger(),
      work: async (e) => {
        order.push(e.eventId);
        throw new Error('the write failed');
      },
    });

    const response = await handler(batch(record(event('e-1')), record(event('e-2'))));

    expect(order).toEqual(['delete', 'e-1', 'e-2']);
    // Nothing to report: the records are gone from the queue already.
    expect(response).toEqual({ batchItemFailures: [] });
  });
});

import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Mode } from '../../../../../contract/topology.js';
import {
  PRODUCTION_SHAPES,
  type ShapeDeps,
} from '../../../../../harness/studies/benchmarks/production-shape.js';
import { messageBody, sqsEvent, sqsRecord } from '../../../../support/sqs-events.js';

const ddb = mockClient(DynamoDBDocumentClient);

const deps: ShapeDeps = {
  ddb: DynamoDBDocumentClient.from(new (await import('@aws-sdk/client-dynamodb')).DynamoDBClient({})),
  sqs: new SQSClient({}),
  tableName: 'ledger-test',
  pk: 'RUN#run-p#MODE#shape',
  logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
};

/** Every request the shape sent, as the table would see it: its operation and its input. */
const sent = () =>
  ddb.calls().map((call) => call.args[0] as { constructor: { name: string }; input: object });

describe('the production shapes: each mode’s core with nothing but its own settings', () => {
  beforeEach(() => {
    ddb.reset();
    ddb.on(UpdateCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
  });

  it.each(Object.entries(PRODUCTION_SHAPES))(
    '%s sends its core’s write and nothing of the lab’s',
    async (_mode, shape) => {
      const body = messageBody({
        runId: 'run-p',
        eventId: 'evt-p',
        accountId: 'acct-p',
        amountCents: 40,
        seq: 1,
        createdAt: new Date().toISOString(),
      });

      const response = await shape.handler(deps)(sqsEvent(sqsRecord({ ...body, balanceAfterCents: 40 })));

      expect(response).toEqual({ batchItemFailures: [] });
      const requests = sent();
      // One request per message: the core's write, and no counter, crash or evidence of the lab.
      expect(requests).toHaveLength(1);
      const text = JSON.stringify(requests[0]?.input);
      expect(text).not.toMatch(/#lab|STAT#|CRASH#|applications|receiveCount|runId/);
    },
  );

  it('prices the yardstick and the marker transaction apart: one UpdateItem against one transaction of two', async () => {
    const shapes = PRODUCTION_SHAPES as Record<
      Mode,
      NonNullable<(typeof PRODUCTION_SHAPES)['at-least-once']>
    >;
    const body = messageBody({
      runId: 'run-p',
      eventId: 'evt-y',
      accountId: 'acct-y',
      amountCents: 4000,
      createdAt: new Date().toISOString(),
    });

    await shapes['at-least-once'].handler(deps)(sqsEvent(sqsRecord(body)));
    await shapes['effectively-once'].handler(deps)(sqsEvent(sqsRecord(body)));

    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'ledger-test',
      Key: { pk: deps.pk, sk: 'BAL#acct-y' },
      UpdateExpression: 'ADD balanceCents :amount',
      ExpressionAttributeValues: { ':amount': 4000 },
    });
    expect(ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems).toHaveLength(2);
    expect(shapes['at-least-once'].writeUnitsPerMessage).toBe(1);
    expect(shapes['effectively-once'].writeUnitsPerMessage).toBe(4);
  });
});

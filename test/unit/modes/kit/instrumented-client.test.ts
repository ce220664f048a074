import { DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseAppliedOnBalance } from '../../../../contract/ledger-keys.js';
import { processBatch } from '../../../../modes/at-least-once.js';
import { withMoreAttributes } from '../../../../modes/kit/instrumented-client.js';
import { consumerDeps } from '../../../support/consumer-deps.js';
import { lambdaContext, messageBody, sqsEvent, sqsRecord } from '../../../support/sqs-events.js';

describe('withMoreAttributes: the lab’s evidence joined to a core’s update', () => {
  const update = {
    TableName: 't',
    Key: { pk: 'p' },
    UpdateExpression: 'ADD #add :add SET #set = :set',
    ConditionExpression: 'attribute_not_exists(#set)',
    ExpressionAttributeNames: { '#add': 'add', '#set': 'set' },
    ExpressionAttributeValues: { ':add': 1, ':set': 'x' },
  };

  it('joins each clause, keeps the key and the condition, and leaves placeholders named like keywords alone', () => {
    const more = withMoreAttributes(update, {
      add: { writes: 1 },
      set: { seen: 'yes', missing: undefined },
      setExpressions: { first: { expression: 'if_not_exists(#name, :at)', values: { ':at': 5 } } },
    });

    expect(more.UpdateExpression).toBe(
      'SET #set = :set, #lab2 = :lab2, #lab3 = if_not_exists(#lab3, :lab3_at) ADD #add :add, #lab1 :lab1',
    );
    expect(more).toMatchObject({ Key: update.Key, ConditionExpression: update.ConditionExpression });
    expect(more.ExpressionAttributeNames).toMatchObject({
      '#lab1': 'writes',
      '#lab2': 'seen',
      '#lab3': 'first',
    });
    expect(more.ExpressionAttributeValues).toEqual({
      ':add': 1,
      ':set': 'x',
      ':lab1': 1,
      ':lab2': 'yes',
      ':lab3_at': 5,
    });
    // The core's own input is untouched: the lab sends a copy.
    expect(update.UpdateExpression).toBe('ADD #add :add SET #set = :set');
  });

  it('refuses what is not an update expression', () => {
    expect(() => withMoreAttributes({ UpdateExpression: 'balance + 1' }, { set: { a: 1 } })).toThrow(
      /not an update expression/,
    );
  });
});

describe('at-least-once’s evidence on the balance item', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    ddb.reset();
    ddb.on(UpdateCommand).resolves({});
  });

  it('gives each credit of one account in one batch its own event’s application', async () => {
    const first = messageBody({ eventId: 'evt-1', accountId: 'acct-1', amountCents: 100 });
    const second = messageBody({ eventId: 'evt-2', accountId: 'acct-1', amountCents: 200 });

    await processBatch(
      sqsEvent(sqsRecord(first), sqsRecord(second, { receiveCount: 3 })),
      lambdaContext,
      consumerDeps('at-least-once'),
    );

    const credits = ddb
      .commandCalls(UpdateCommand)
      .map((call) => call.args[0].input as UpdateCommandInput)
      .filter((input) => String(input.Key?.sk) === 'BAL#acct-1');
    const applicationOf = (input: UpdateCommandInput | undefined) => {
      const names = Object.values(input?.ExpressionAttributeNames ?? {}).filter((name) =>
        name.startsWith('APP#'),
      );
      const entries = Object.entries(input?.ExpressionAttributeValues ?? {}).find(([alias]) =>
        alias.endsWith('_entry'),
      )?.[1] as string[] | undefined;
      const [entry] = entries ?? [];
      return { names, ...parseAppliedOnBalance(entry) };
    };
    expect(credits.map(applicationOf)).toMatchObject([
      { names: ['APP#evt-1'], receiveCount: 1, amountCents: 100 },
      { names: ['APP#evt-2'], receiveCount: 3, amountCents: 200 },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  authorizationRequestsOf,
  UnknownResourceError,
  UnmodelledCallError,
} from '../../../../../harness/environments/assembly/iam/actions.js';
import type { ServiceCall } from '../../../../../harness/environments/assembly/iam/service-call.js';
import {
  AT_LEAST_ONCE_DLQ,
  AT_LEAST_ONCE_FUNCTION,
  AT_LEAST_ONCE_QUEUE,
  directory,
  LEDGER,
  LEDGER_NAME,
  queueUrl,
  STACK,
} from './iam-support.js';

const TLS = { secureTransport: true };
const FROM_CODE = { secureTransport: true, sourceFunctionArn: AT_LEAST_ONCE_FUNCTION };
const OWN = 'RUN#r1#MODE#at-least-once';

const requestsOf = (call: ServiceCall, context = TLS) => authorizationRequestsOf(call, directory, context);
const actionsOn = (call: ServiceCall) => requestsOf(call).map((r) => `${r.action} ${r.resource}`);

describe('authorizationRequestsOf: the request context', () => {
  it('carries aws:SecureTransport on every request, and lambda:SourceFunctionArn from code only', () => {
    const call: ServiceCall = {
      service: 'sqs',
      operation: 'DeleteMessage',
      input: { QueueUrl: queueUrl(AT_LEAST_ONCE_QUEUE) },
    };
    expect(requestsOf(call, { secureTransport: false })).toEqual([
      {
        action: 'sqs:DeleteMessage',
        resource: AT_LEAST_ONCE_QUEUE,
        context: { 'aws:SecureTransport': 'false' },
      },
    ]);
    expect(requestsOf(call, FROM_CODE)[0]?.context).toEqual({
      'aws:SecureTransport': 'true',
      'lambda:SourceFunctionArn': AT_LEAST_ONCE_FUNCTION,
    });
  });
});

describe('authorizationRequestsOf: DynamoDB', () => {
  it('puts the item partition keys in dynamodb:LeadingKeys, as a list', () => {
    const [put] = requestsOf({
      service: 'dynamodb',
      operation: 'PutItem',
      input: { TableName: LEDGER_NAME, Item: { pk: { S: OWN }, sk: { S: 'STAT#deliveries' } } },
    });
    expect(put).toEqual({
      action: 'dynamodb:PutItem',
      resource: LEDGER,
      context: { 'aws:SecureTransport': 'true', 'dynamodb:LeadingKeys': [OWN] },
    });
  });

  it("reads a Query's partition key from its KeyConditionExpression, and a Query on an index is on the index ARN", () => {
    const [query] = requestsOf({
      service: 'dynamodb',
      operation: 'Query',
      input: {
        TableName: LEDGER_NAME,
        IndexName: 'byAccount',
        KeyConditionExpression: '#k = :p AND begins_with(#s, :prefix)',
        ExpressionAttributeNames: { '#k': 'pk', '#s': 'sk' },
        ExpressionAttributeValues: { ':p': { S: OWN }, ':prefix': { S: 'APP#' } },
      },
    });
    expect(query).toMatchObject({
      action: 'dynamodb:Query',
      resource: `${LEDGER}/index/byAccount`,
      context: { 'dynamodb:LeadingKeys': [OWN] },
    });
    const [reversed] = requestsOf({
      service: 'dynamodb',
      operation: 'Query',
      input: {
        TableName: LEDGER_NAME,
        KeyConditionExpression: ':p = pk',
        ExpressionAttributeValues: { ':p': { S: OWN } },
      },
    });
    expect(reversed).toMatchObject({ resource: LEDGER, context: { 'dynamodb:LeadingKeys': [OWN] } });
  });

  it('authorizes BatchWriteItem as its own action, once per table, with every partition it writes', () => {
    const requests = requestsOf({
      service: 'dynamodb',
      operation: 'BatchWriteItem',
      input: {
        RequestItems: {
          [LEDGER_NAME]: [
            { PutRequest: { Item: { pk: { S: 'RUN#r1#MANIFEST' }, sk: { S: 'EVT#1' } } } },
            { PutRequest: { Item: { pk: { S: 'RUN#r1#MANIFEST' }, sk: { S: 'EVT#2' } } } },
            { DeleteRequest: { Key: { pk: { S: OWN }, sk: { S: 'BAL#a' } } } },
          ],
        },
      },
    });
    expect(requests).toEqual([
      {
        action: 'dynamodb:BatchWriteItem',
        resource: LEDGER,
        context: { 'aws:SecureTransport': 'true', 'dynamodb:LeadingKeys': ['RUN#r1#MANIFEST', OWN] },
      },
    ]);
  });

  it('authorizes each TransactWriteItems item as its own action, with dynamodb:EnclosingOperation where it is defined', () => {
    const key = (pk: string) => ({ pk: { S: pk }, sk: { S: 'APP#e1' } });
    const requests = requestsOf({
      service: 'dynamodb',
      operation: 'TransactWriteItems',
      input: {
        TransactItems: [
          { Put: { TableName: LEDGER_NAME, Item: key(OWN) } },
          { Update: { TableName: LEDGER_NAME, Key: key(OWN), UpdateExpression: 'ADD n :one' } },
          { Delete: { TableName: LEDGER_NAME, Key: key('RUN#r1#MODE#other') } },
          {
            ConditionCheck: {
              TableName: LEDGER_NAME,
              Key: key(OWN),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
        ],
      },
    });
    expect(
      requests.map((r) => [
        r.action,
        r.context['dynamodb:LeadingKeys'],
        r.context['dynamodb:EnclosingOperation'],
      ]),
    ).toEqual([
      ['dynamodb:PutItem', [OWN], 'TransactWriteItems'],
      ['dynamodb:UpdateItem', [OWN], 'TransactWriteItems'],
      ['dynamodb:DeleteItem', ['RUN#r1#MODE#other'], 'TransactWriteItems'],
      ['dynamodb:ConditionCheckItem', [OWN], undefined],
    ]);
  });

  it('refuses an item call on a table it does not know the key of, rather than guess its LeadingKeys', () => {
    const call: ServiceCall = {
      service: 'dynamodb',
      operation: 'GetItem',
      input: { TableName: 'nope', Key: { id: { S: 'x' } } },
    };
    expect(() => requestsOf(call)).toThrow(UnknownResourceError);
    expect(
      actionsOn({ service: 'dynamodb', operation: 'DescribeTable', input: { TableName: 'nope' } }),
    ).toEqual([`dynamodb:DescribeTable arn:aws:dynamodb:us-east-1:123456789012:table/nope`]);
  });
});

describe('authorizationRequestsOf: SQS, Lambda, CloudFormation', () => {
  it('authorizes the batch operations as their single actions', () => {
    const input = { QueueUrl: queueUrl(AT_LEAST_ONCE_QUEUE) };
    expect(actionsOn({ service: 'sqs', operation: 'DeleteMessageBatch', input })).toEqual([
      `sqs:DeleteMessage ${AT_LEAST_ONCE_QUEUE}`,
    ]);
    expect(actionsOn({ service: 'sqs', operation: 'SendMessageBatch', input })).toEqual([
      `sqs:SendMessage ${AT_LEAST_ONCE_QUEUE}`,
    ]);
    expect(actionsOn({ service: 'sqs', operation: 'ChangeMessageVisibilityBatch', input })).toEqual([
      `sqs:ChangeMessageVisibility ${AT_LEAST_ONCE_QUEUE}`,
    ]);
    expect(actionsOn({ service: 'sqs', operation: 'ListQueues', input: {} })).toEqual(['sqs:ListQueues *']);
  });

  it("adds a move task's implied actions: receive, delete and attributes on the DLQ, send to where it returns", () => {
    expect(
      actionsOn({
        service: 'sqs',
        operation: 'StartMessageMoveTask',
        input: { SourceArn: AT_LEAST_ONCE_DLQ },
      }),
    ).toEqual([
      `sqs:StartMessageMoveTask ${AT_LEAST_ONCE_DLQ}`,
      `sqs:ReceiveMessage ${AT_LEAST_ONCE_DLQ}`,
      `sqs:DeleteMessage ${AT_LEAST_ONCE_DLQ}`,
      `sqs:GetQueueAttributes ${AT_LEAST_ONCE_DLQ}`,
      `sqs:SendMessage ${AT_LEAST_ONCE_QUEUE}`,
    ]);
    const elsewhere = 'arn:aws:sqs:us-east-1:123456789012:DeliverySemantics-Elsewhere';
    expect(
      actionsOn({
        service: 'sqs',
        operation: 'StartMessageMoveTask',
        input: { SourceArn: AT_LEAST_ONCE_DLQ, DestinationArn: elsewhere },
      }).at(-1),
    ).toBe(`sqs:SendMessage ${elsewhere}`);
    expect(
      actionsOn({ service: 'sqs', operation: 'CancelMessageMoveTask', input: { TaskHandle: 'task-1' } }),
    ).toEqual([`sqs:CancelMessageMoveTask ${AT_LEAST_ONCE_DLQ}`]);
  });

  it('needs lambda:InvokeFunctionUrl and lambda:InvokeFunction for a Function URL, each with its key', () => {
    expect(
      requestsOf({
        service: 'lambda',
        operation: 'InvokeFunctionUrl',
        input: { FunctionName: AT_LEAST_ONCE_FUNCTION },
      }),
    ).toEqual([
      {
        action: 'lambda:InvokeFunctionUrl',
        resource: AT_LEAST_ONCE_FUNCTION,
        context: { 'aws:SecureTransport': 'true', 'lambda:FunctionUrlAuthType': 'AWS_IAM' },
      },
      {
        action: 'lambda:InvokeFunction',
        resource: AT_LEAST_ONCE_FUNCTION,
        context: { 'aws:SecureTransport': 'true', 'lambda:InvokedViaFunctionUrl': 'true' },
      },
    ]);
    expect(
      actionsOn({ service: 'lambda', operation: 'Invoke', input: { FunctionName: 'fn', Qualifier: 'live' } }),
    ).toEqual(['lambda:InvokeFunction arn:aws:lambda:us-east-1:123456789012:function:fn:live']);
    expect(
      actionsOn({
        service: 'cloudformation',
        operation: 'DescribeStacks',
        input: { StackName: 'DeliverySemantics' },
      }),
    ).toEqual([`cloudformation:DescribeStacks ${STACK}`]);
  });

  it('throws for an operation it does not model, naming it, instead of allowing it', () => {
    expect(() => requestsOf({ service: 'sqs', operation: 'CreateQueue', input: { QueueName: 'q' } })).toThrow(
      new UnmodelledCallError('sqs', 'CreateQueue'),
    );
    expect(() => requestsOf({ service: 'dynamodb', operation: 'toString', input: {} })).toThrow(
      'the local IAM model does not know which actions dynamodb:toString needs; add it to harness/environments/assembly/iam/actions.ts',
    );
    expect(() => requestsOf({ service: 'cloudformation', operation: 'DescribeStacks', input: {} })).toThrow(
      UnmodelledCallError,
    );
  });
});

import { describe, expect, it } from 'vitest';
import {
  authorizationRequestsOf,
  type RequestContext,
} from '../../../../../harness/environments/assembly/iam/actions.js';
import {
  authorize,
  type Decision,
  denialLine,
  PolicyEvaluationError,
  type Principal,
} from '../../../../../harness/environments/assembly/iam/evaluate.js';
import type { ServiceCall } from '../../../../../harness/environments/assembly/iam/service-call.js';
import {
  AT_LEAST_ONCE_DLQ,
  AT_LEAST_ONCE_FUNCTION,
  AT_LEAST_ONCE_QUEUE,
  AT_LEAST_ONCE_STATEMENTS,
  atLeastOnceRole,
  directory,
  LEDGER,
  LEDGER_NAME,
  operator,
  queueUrl,
  resourcePolicyOf,
  role,
  verifierRole,
  withoutAction,
} from './iam-support.js';

const TLS: RequestContext = { secureTransport: true };
const FROM_CODE: RequestContext = { secureTransport: true, sourceFunctionArn: AT_LEAST_ONCE_FUNCTION };
const POLICY = 'AtLeastOnceFunctionRoleDefaultPolicy972C0ED1';

const decide = (principal: Principal, call: ServiceCall, context: RequestContext = TLS): Promise<Decision> =>
  authorize(principal, authorizationRequestsOf(call, directory, context), resourcePolicyOf);

const deleteOwnMessage: ServiceCall = {
  service: 'sqs',
  operation: 'DeleteMessage',
  input: { QueueUrl: queueUrl(AT_LEAST_ONCE_QUEUE), ReceiptHandle: 'r' },
};

const ledgerItem = (pk: string) => ({ pk: { S: pk }, sk: { S: 'APP#e1' } });
const transactWrite = (...pks: string[]): ServiceCall => ({
  service: 'dynamodb',
  operation: 'TransactWriteItems',
  input: {
    TransactItems: pks.map((pk, i) =>
      i === 0
        ? { Put: { TableName: LEDGER_NAME, Item: ledgerItem(pk) } }
        : { Update: { TableName: LEDGER_NAME, Key: ledgerItem(pk), UpdateExpression: 'ADD n :one' } },
    ),
  },
});

describe('authorize: the at-least-once role, as synthesized', () => {
  it("denies the function's code deleting its own message, by OnlyTheEventSourceMappingDeletes; the poller may", async () => {
    const code = await decide(atLeastOnceRole(), deleteOwnMessage, FROM_CODE);
    expect(code).toMatchObject({
      allowed: false,
      action: 'sqs:DeleteMessage',
      resource: AT_LEAST_ONCE_QUEUE,
      reason: 'explicit deny',
      statement: `${POLICY} OnlyTheEventSourceMappingDeletes`,
    });
    expect(denialLine(code)).toBe(
      `IAM denied AtLeastOnceFunction sqs:DeleteMessage on ${AT_LEAST_ONCE_QUEUE}: explicit deny by ${POLICY} OnlyTheEventSourceMappingDeletes`,
    );
    const batch = await decide(
      atLeastOnceRole(),
      { ...deleteOwnMessage, operation: 'DeleteMessageBatch' },
      FROM_CODE,
    );
    expect(batch.allowed).toBe(false);
    // The poller's calls carry no lambda:SourceFunctionArn: the ArnLike on the absent key does not match.
    expect(await decide(atLeastOnceRole(), deleteOwnMessage)).toMatchObject({ allowed: true });
  });

  it('allows a transaction on its own partition, and denies one with an item on another mode, naming the Allow it missed', async () => {
    expect(
      await decide(atLeastOnceRole(), transactWrite('RUN#r1#MODE#at-least-once'), FROM_CODE),
    ).toMatchObject({
      allowed: true,
    });
    const mixed = await decide(
      atLeastOnceRole(),
      transactWrite('RUN#r1#MODE#at-least-once', 'RUN#r1#MODE#at-most-once'),
      FROM_CODE,
    );
    expect(mixed).toEqual({
      allowed: false,
      principal: 'AtLeastOnceFunction',
      action: 'dynamodb:UpdateItem',
      resource: LEDGER,
      reason: 'no statement allows it',
      statement: `${POLICY} WriteOwnModePartitionOnly`,
      policies: [POLICY],
    });
    expect(denialLine(mixed)).toContain(
      `matched but its condition does not hold: ${POLICY} WriteOwnModePartitionOnly`,
    );
  });

  it('denies a write whose partition key is missing: Null false fails on an absent dynamodb:LeadingKeys', async () => {
    const noKey: ServiceCall = {
      service: 'dynamodb',
      operation: 'PutItem',
      input: { TableName: LEDGER_NAME, Item: { sk: { S: 'STAT#deliveries' } } },
    };
    expect(await decide(atLeastOnceRole(), noKey, FROM_CODE)).toMatchObject({
      allowed: false,
      statement: `${POLICY} WriteOwnModePartitionOnly`,
    });
  });

  it('denies BatchWriteItem even on its own partition: it is its own action, which the role lacks', async () => {
    const call: ServiceCall = {
      service: 'dynamodb',
      operation: 'BatchWriteItem',
      input: {
        RequestItems: { [LEDGER_NAME]: [{ PutRequest: { Item: ledgerItem('RUN#r1#MODE#at-least-once') } }] },
      },
    };
    expect(await decide(atLeastOnceRole(), call, FROM_CODE)).toMatchObject({
      allowed: false,
      action: 'dynamodb:BatchWriteItem',
      reason: 'no statement allows it',
      statement: undefined,
    });
    expect(await decide(operator(), call)).toMatchObject({ allowed: true });
  });
});

describe("authorize: the queues' TLS-only policy", () => {
  const send: ServiceCall = {
    service: 'sqs',
    operation: 'SendMessage',
    input: { QueueUrl: queueUrl(AT_LEAST_ONCE_QUEUE), MessageBody: '{}' },
  };

  it('denies a plain-HTTP SendMessage by the queue policy, and allows it over TLS', async () => {
    expect(await decide(operator(), send, { secureTransport: false })).toMatchObject({
      allowed: false,
      reason: 'explicit deny',
      statement: `the resource policy of ${AT_LEAST_ONCE_QUEUE} Statement[0]`,
    });
    expect(await decide(operator(), send)).toMatchObject({ allowed: true });
  });
});

describe("authorize: the verifier's read-only role", () => {
  const query = (index?: string): ServiceCall => ({
    service: 'dynamodb',
    operation: 'Query',
    input: {
      TableName: LEDGER_NAME,
      ...(index ? { IndexName: index } : {}),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: 'RUN#r1#MODE#at-least-once' } },
    },
  });

  it('allows its Query and denies a PutItem', async () => {
    expect(await decide(verifierRole(), query())).toMatchObject({ allowed: true });
    const put: ServiceCall = {
      service: 'dynamodb',
      operation: 'PutItem',
      input: { TableName: LEDGER_NAME, Item: ledgerItem('RUN#r1#MODE#at-least-once') },
    };
    expect(await decide(verifierRole(), put)).toMatchObject({ allowed: false, action: 'dynamodb:PutItem' });
  });

  it('denies a Query on an index, whose ARN the table grant does not cover', async () => {
    expect(await decide(verifierRole(), query('byAccount'))).toMatchObject({
      allowed: false,
      resource: `${LEDGER}/index/byAccount`,
    });
  });
});

describe("authorize: the operator's published policy", () => {
  const redrive: ServiceCall = {
    service: 'sqs',
    operation: 'StartMessageMoveTask',
    input: { SourceArn: AT_LEAST_ONCE_DLQ },
  };

  it("allows a redrive, and denies it when one of the move task's implied actions is missing", async () => {
    expect(await decide(operator(), redrive)).toMatchObject({ allowed: true });
    expect(
      await decide(
        operator((p) => withoutAction(p, 'sqs:DeleteMessage')),
        redrive,
      ),
    ).toMatchObject({
      allowed: false,
      action: 'sqs:DeleteMessage',
      resource: AT_LEAST_ONCE_DLQ,
      reason: 'no statement allows it',
    });
    expect(
      await decide(
        operator((p) => withoutAction(p, 'sqs:SendMessage')),
        redrive,
      ),
    ).toMatchObject({
      allowed: false,
      action: 'sqs:SendMessage',
      resource: AT_LEAST_ONCE_QUEUE,
    });
  });
});

describe('authorize: a Function URL with AWS_IAM', () => {
  const viaUrl: ServiceCall = {
    service: 'lambda',
    operation: 'InvokeFunctionUrl',
    input: { FunctionName: AT_LEAST_ONCE_FUNCTION },
  };
  const caller = (...actions: string[]) =>
    role('Charger', 'ChargerPolicy', [
      { Effect: 'Allow', Action: actions, Resource: AT_LEAST_ONCE_FUNCTION },
    ]);

  it('needs both lambda:InvokeFunctionUrl and lambda:InvokeFunction', async () => {
    expect(await decide(caller('lambda:InvokeFunctionUrl'), viaUrl)).toMatchObject({
      allowed: false,
      action: 'lambda:InvokeFunction',
    });
    expect(await decide(caller('lambda:InvokeFunction'), viaUrl)).toMatchObject({
      allowed: false,
      action: 'lambda:InvokeFunctionUrl',
    });
    expect(await decide(caller('lambda:InvokeFunctionUrl', 'lambda:InvokeFunction'), viaUrl)).toMatchObject({
      allowed: true,
    });
  });

  it('lets a policy allow InvokeFunction through the URL only, by lambda:InvokedViaFunctionUrl', async () => {
    const urlOnly = role('Charger', 'ChargerPolicy', [
      {
        Effect: 'Allow',
        Action: 'lambda:InvokeFunctionUrl',
        Resource: AT_LEAST_ONCE_FUNCTION,
        Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
      },
      {
        Sid: 'ThroughTheUrlOnly',
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: AT_LEAST_ONCE_FUNCTION,
        Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': 'true' } },
      },
    ]);
    expect(await decide(urlOnly, viaUrl)).toMatchObject({ allowed: true });
    const direct: ServiceCall = {
      service: 'lambda',
      operation: 'Invoke',
      input: { FunctionName: AT_LEAST_ONCE_FUNCTION },
    };
    expect(await decide(urlOnly, direct)).toMatchObject({
      allowed: false,
      statement: 'ChargerPolicy ThroughTheUrlOnly',
    });
  });
});

describe('authorize: what it refuses to evaluate', () => {
  it('throws for a policy iam-simulate cannot read (an unresolved intrinsic), never allowing', async () => {
    const unresolved = atLeastOnceRole([
      ...AT_LEAST_ONCE_STATEMENTS,
      {
        Effect: 'Allow',
        Action: 'sqs:SendMessage',
        Resource: { 'Fn::GetAtt': ['AtLeastOnceQueueA3B497EA', 'Arn'] },
      },
    ]);
    await expect(decide(unresolved, deleteOwnMessage)).rejects.toThrow(PolicyEvaluationError);
  });

  it('throws for a context key the reference does not list for the action, which iam-simulate would drop', async () => {
    const request = {
      action: 'dynamodb:ConditionCheckItem',
      resource: LEDGER,
      context: { 'dynamodb:EnclosingOperation': 'TransactWriteItems' },
    };
    await expect(authorize(atLeastOnceRole(), [request], resourcePolicyOf)).rejects.toThrow(
      /drops context keys dynamodb:EnclosingOperation/,
    );
  });

  it('remembers a decision per principal, and evaluates a changed principal afresh', async () => {
    const principal = atLeastOnceRole();
    const first = await decide(principal, deleteOwnMessage, FROM_CODE);
    expect(await decide(principal, deleteOwnMessage, FROM_CODE)).toBe(first);
    const withoutDeny = atLeastOnceRole(AT_LEAST_ONCE_STATEMENTS.filter((s) => s.Effect !== 'Deny'));
    expect(await decide(withoutDeny, deleteOwnMessage, FROM_CODE)).toMatchObject({ allowed: true });
  });
});

import { sqsRecord as teamRecord } from '@sqs-delivery-semantics/consumer-cores/testing';
import type { Context, SQSRecord } from 'aws-lambda';
import type { MessageBody } from '../../contract/message.js';
import { NOW } from './consumer-deps.js';

let sequence = 0;

export function messageBody(overrides: Partial<MessageBody> = {}): MessageBody {
  sequence += 1;
  return {
    eventId: `evt-${sequence}`,
    runId: 'run-1',
    accountId: 'acct-1',
    amountCents: 250,
    seq: 1,
    balanceAfterCents: 250,
    // The unit tests' clock (consumer-deps.ts): a fresh event, well inside any age guard.
    createdAt: new Date(NOW - 1000).toISOString(),
    ...overrides,
  };
}

/**
 * A record exactly as the Lambda SQS event source delivers it: the cores package's own builder (what a
 * team's tests use), with the lab's run id as a message attribute and a message id shaped like SQS's.
 */
export function sqsRecord(
  body: MessageBody | string,
  overrides: { receiveCount?: number; messageId?: string } = {},
): SQSRecord {
  sequence += 1;
  const runId = typeof body === 'string' ? undefined : body.runId;
  return {
    ...teamRecord(body, {
      messageId: overrides.messageId ?? `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
      receiveCount: overrides.receiveCount ?? 1,
      queueArn: 'arn:aws:sqs:eu-west-1:123456789012:queue',
      messageAttributes: runId
        ? { runId: { stringValue: runId, stringListValues: [], binaryListValues: [], dataType: 'String' } }
        : {},
    }),
    ...(runId ? { md5OfMessageAttributes: 'not-checked' } : {}),
  };
}

export { sqsEvent } from '@sqs-delivery-semantics/consumer-cores/testing';

/** A Lambda context with 30 s left, as an invocation gets one. */
export const lambdaContext: Context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'consumer',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:consumer',
  memoryLimitInMB: '256',
  awsRequestId: 'req-1',
  logGroupName: '/aws/lambda/consumer',
  logStreamName: 'unit',
  getRemainingTimeInMillis: () => 30_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import {
  faultKeyOf,
  receiveCountOf,
  recordsToDelete,
  toSqsRecord,
} from '../../../../harness/lambda-runtime/sqs-event.js';
import { messageBody, sqsRecord } from '../../../support/sqs-events.js';

describe('local event source mapping: what Lambda deletes after an invocation', () => {
  const records = [sqsRecord(messageBody()), sqsRecord(messageBody()), sqsRecord(messageBody())];
  const ids = (list: readonly { messageId: string }[]) => list.map((record) => record.messageId);

  it('deletes the whole batch on success when partial batch responses are off, whatever is returned', () => {
    const failures = { batchItemFailures: [{ itemIdentifier: records[0]?.messageId }] };
    expect(ids(recordsToDelete(records, failures, false).delete)).toEqual(ids(records));
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['an empty object', {}],
    ['an empty list', { batchItemFailures: [] }],
  ])('treats %s as full success', (_name, response) => {
    expect(recordsToDelete(records, response, true)).toEqual({ delete: records, failedWholeBatch: false });
  });

  it('deletes all but the listed records', () => {
    const response = { batchItemFailures: [{ itemIdentifier: records[1]?.messageId }] };
    expect(ids(recordsToDelete(records, response, true).delete)).toEqual([
      records[0]?.messageId,
      records[2]?.messageId,
    ]);
  });

  it.each([
    ['an unknown id', { batchItemFailures: [{ itemIdentifier: 'not-in-batch' }] }],
    ['an empty id', { batchItemFailures: [{ itemIdentifier: '' }] }],
    ['a null id', { batchItemFailures: [{ itemIdentifier: null }] }],
    ['a missing id', { batchItemFailures: [{}] }],
    ['a list that is not a list', { batchItemFailures: 'oops' }],
    ['a response that is not an object', 'ok'],
    ['a number', 42],
    ['a top-level array', [{ itemIdentifier: 'not-in-batch' }]],
    ['an empty top-level array', []],
  ])('fails the whole batch for %s: nothing is deleted', (_name, response) => {
    expect(recordsToDelete(records, response, true)).toEqual({ delete: [], failedWholeBatch: true });
  });
});

describe('local event source mapping: the SQSEvent record shape', () => {
  const ARN = 'arn:aws:sqs:us-east-1:000000000000:q';
  const message = (attributes: Record<string, string>): Message => ({
    MessageId: 'm-1',
    ReceiptHandle: 'rh-1',
    Body: '{}',
    Attributes: {
      ApproximateReceiveCount: '3',
      SentTimestamp: '1700000000000',
      SenderId: 'S',
      ApproximateFirstReceiveTimestamp: '1700000000001',
      ...attributes,
    },
  });

  it.each(['ApproximateReceiveCount', 'SentTimestamp', 'SenderId', 'ApproximateFirstReceiveTimestamp'])(
    'refuses a message without %s instead of making one up',
    (name) => {
      const withoutIt = message({});
      delete withoutIt.Attributes?.[name as keyof NonNullable<Message['Attributes']>];
      expect(() => toSqsRecord(withoutIt, ARN, 'us-east-1')).toThrow(
        new Error(`SQS returned a message without ${name}`),
      );
    },
  );

  it('refuses a message received without any system attributes', () => {
    expect(() => toSqsRecord({ MessageId: 'm-1', ReceiptHandle: 'rh-1' }, ARN, 'us-east-1')).toThrow(
      /without ApproximateReceiveCount/,
    );
  });

  it('keys fault draws on the event id, or on the message id when the body names no event', () => {
    const body = messageBody({ eventId: 'evt-keyed' });
    expect(faultKeyOf(sqsRecord(body, { messageId: 'm-9' }))).toBe('evt-keyed');
    expect(faultKeyOf(sqsRecord('not json', { messageId: 'm-9' }))).toBe('m-9');
    // A malformed body still names its event through the producer's attribute.
    const poison = sqsRecord('{"eventId": "evt-p", broken', { messageId: 'm-8' });
    const named = { ...poison, messageAttributes: { eventId: { stringValue: 'evt-p', dataType: 'String' } } };
    expect(faultKeyOf(named)).toBe('evt-p');
    expect(receiveCountOf(sqsRecord(body, { receiveCount: 4 }))).toBe(4);
  });

  it('maps an SQS message to the record Lambda delivers', () => {
    const record = toSqsRecord(
      {
        MessageId: 'm-1',
        ReceiptHandle: 'rh-1',
        Body: '{}',
        MD5OfBody: '99914b932bd37a50b983c5e7c90ae93b',
        Attributes: {
          ApproximateReceiveCount: '3',
          SentTimestamp: '1700000000000',
          SenderId: 'S',
          ApproximateFirstReceiveTimestamp: '1700000000001',
        },
        MessageAttributes: { runId: { DataType: 'String', StringValue: 'run-1' } },
      },
      'arn:aws:sqs:us-east-1:000000000000:q',
      'us-east-1',
    );
    expect(record).toEqual({
      messageId: 'm-1',
      receiptHandle: 'rh-1',
      body: '{}',
      attributes: {
        ApproximateReceiveCount: '3',
        SentTimestamp: '1700000000000',
        SenderId: 'S',
        ApproximateFirstReceiveTimestamp: '1700000000001',
      },
      messageAttributes: {
        runId: { dataType: 'String', stringValue: 'run-1', stringListValues: [], binaryListValues: [] },
      },
      md5OfBody: '99914b932bd37a50b983c5e7c90ae93b',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:q',
      awsRegion: 'us-east-1',
    });
  });
});

import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import {
  faultKeyOf,
  receiveCountOf,
  recordsToDelete,
  toSqsRecord,
} from '../../../../../harness/local-aws/lambda-runtime/sqs-event.js';
import {
  AWS_SAMPLE_RECORD_WITH_ATTRIBUTES,
  AWS_SAMPLE_RECORD_WITHOUT_ATTRIBUTES,
  compareShape,
  FIELDS_BEYOND_THE_SAMPLE,
} from '../../../../support/aws-sqs-sample-event.js';
import { messageBody, sqsRecord } from '../../../../support/sqs-events.js';

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
    MD5OfBody: '99914b932bd37a50b983c5e7c90ae93b',
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

  it.each(['Body', 'MD5OfBody'] as const)('refuses a message without %s instead of making one up', (name) => {
    const withoutIt = message({});
    delete withoutIt[name];
    expect(() => toSqsRecord(withoutIt, ARN, 'us-east-1')).toThrow(
      new Error(`SQS returned a message without ${name}`),
    );
  });

  it('refuses a message received without any system attributes', () => {
    const { Attributes: _none, ...withoutThem } = message({});
    expect(() => toSqsRecord(withoutThem, ARN, 'us-east-1')).toThrow(/without ApproximateReceiveCount/);
  });

  it('refuses a message with attributes but without their digest, or an attribute without its data type', () => {
    const runId = { DataType: 'String', StringValue: 'run-1' };
    expect(() => toSqsRecord({ ...message({}), MessageAttributes: { runId } }, ARN, 'us-east-1')).toThrow(
      new Error('SQS returned a message without MD5OfMessageAttributes'),
    );
    const untyped = {
      ...message({}),
      MessageAttributes: { runId: { DataType: undefined, StringValue: 'run-1' } },
    };
    expect(() => toSqsRecord({ ...untyped, MD5OfMessageAttributes: 'd' }, ARN, 'us-east-1')).toThrow(
      new Error('SQS returned a message without the DataType of message attribute runId'),
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
        ...message({}),
        MessageAttributes: { runId: { DataType: 'String', StringValue: 'run-1' } },
        MD5OfMessageAttributes: 'c9d3ac2c5d1a8e2c0a1e0b9c8b7a6f5e',
      },
      ARN,
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
      md5OfMessageAttributes: 'c9d3ac2c5d1a8e2c0a1e0b9c8b7a6f5e',
      md5OfBody: '99914b932bd37a50b983c5e7c90ae93b',
      eventSource: 'aws:sqs',
      eventSourceARN: ARN,
      awsRegion: 'us-east-1',
    });
  });

  it('gives a Binary attribute its base64 binaryValue and no stringValue', () => {
    const record = toSqsRecord(
      {
        ...message({}),
        MessageAttributes: { blob: { DataType: 'Binary', BinaryValue: Buffer.from('hi') } },
        MD5OfMessageAttributes: 'd',
      },
      ARN,
      'us-east-1',
    );
    expect(record.messageAttributes).toEqual({
      blob: { dataType: 'Binary', binaryValue: 'aGk=', stringListValues: [], binaryListValues: [] },
    });
  });

  it('passes on the optional system attributes SQS returned, and only the ones Lambda puts in a record', () => {
    const fifo = {
      AWSTraceHeader: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
      SequenceNumber: '18849496460467696128',
      MessageGroupId: '1',
      MessageDeduplicationId: '1',
      DeadLetterQueueSourceArn: 'arn:aws:sqs:us-east-1:000000000000:source',
    };
    const record = toSqsRecord(message({ ...fifo, SqsManagedSseEnabled: 'true' }), ARN, 'us-east-1');
    expect(record.attributes).toEqual({
      ApproximateReceiveCount: '3',
      SentTimestamp: '1700000000000',
      SenderId: 'S',
      ApproximateFirstReceiveTimestamp: '1700000000001',
      ...fifo,
    });
    // None of them on a standard queue's message: the record has none of them either.
    expect(Object.keys(toSqsRecord(message({}), ARN, 'us-east-1').attributes)).toEqual([
      'ApproximateReceiveCount',
      'SentTimestamp',
      'SenderId',
      'ApproximateFirstReceiveTimestamp',
    ]);
  });

  describe("against AWS's documented sample event (Lambda developer guide, with-sqs.html)", () => {
    /** The ReceiveMessage message SQS returns for a sample record: the same values, SQS's field names. */
    const asReceived = (
      sample: typeof AWS_SAMPLE_RECORD_WITH_ATTRIBUTES | typeof AWS_SAMPLE_RECORD_WITHOUT_ATTRIBUTES,
      md5OfMessageAttributes?: string,
    ): Message => ({
      MessageId: sample.messageId,
      ReceiptHandle: sample.receiptHandle,
      Body: sample.body,
      MD5OfBody: sample.md5OfBody,
      Attributes: { ...sample.attributes },
      ...(md5OfMessageAttributes ? { MD5OfMessageAttributes: md5OfMessageAttributes } : {}),
      ...(Object.keys(sample.messageAttributes).length > 0
        ? { MessageAttributes: { myAttribute: { DataType: 'String', StringValue: 'myValue' } } }
        : {}),
    });
    const ARN_OF_SAMPLE = AWS_SAMPLE_RECORD_WITH_ATTRIBUTES.eventSourceARN;

    it('builds the sample record with attributes, value for value, plus its md5OfMessageAttributes', () => {
      const md5 = '97ba4b8d2e0e8e0ea2b4d9de2a4e8d3c';
      const record = toSqsRecord(
        asReceived(AWS_SAMPLE_RECORD_WITH_ATTRIBUTES, md5),
        ARN_OF_SAMPLE,
        'us-east-2',
      );
      expect(record).toEqual({ ...AWS_SAMPLE_RECORD_WITH_ATTRIBUTES, md5OfMessageAttributes: md5 });
      const shape = compareShape(AWS_SAMPLE_RECORD_WITH_ATTRIBUTES, record, ['messageAttributes']);
      expect(shape).toEqual({ missing: [], mistyped: [], extra: FIELDS_BEYOND_THE_SAMPLE });
    });

    it('builds the sample record without attributes exactly: no md5OfMessageAttributes', () => {
      const record = toSqsRecord(
        asReceived(AWS_SAMPLE_RECORD_WITHOUT_ATTRIBUTES),
        ARN_OF_SAMPLE,
        'us-east-2',
      );
      expect(record).toStrictEqual(AWS_SAMPLE_RECORD_WITHOUT_ATTRIBUTES);
    });
  });
});

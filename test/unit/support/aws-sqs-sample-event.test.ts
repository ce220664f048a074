import { describe, expect, it } from 'vitest';
import {
  AWS_SAMPLE_RECORD_WITH_ATTRIBUTES,
  compareShape,
  jsonTypeOf,
} from '../../support/aws-sqs-sample-event.js';

describe('the structural comparison against AWS sample records', () => {
  const sample = AWS_SAMPLE_RECORD_WITH_ATTRIBUTES;

  it('finds nothing between the sample and itself', () => {
    expect(compareShape(sample, structuredClone(sample), ['messageAttributes'])).toEqual({
      missing: [],
      mistyped: [],
      extra: {},
    });
  });

  it('names what is missing, mistyped or extra, by path, at any depth', () => {
    const { md5OfBody: _gone, ...rest } = structuredClone(sample);
    const changed = {
      ...rest,
      attributes: { ...rest.attributes, ApproximateReceiveCount: 1 },
      messageAttributes: { runId: { stringValue: 'r', stringListValues: null, dataType: 'String' } },
      md5OfMessageAttributes: 'd',
    };
    expect(compareShape(sample, changed, ['messageAttributes'])).toEqual({
      missing: ['messageAttributes.runId.binaryListValues', 'md5OfBody'],
      mistyped: [
        'attributes.ApproximateReceiveCount: string expected, number found',
        'messageAttributes.runId.stringListValues: array expected, null found',
      ],
      extra: { md5OfMessageAttributes: 'string' },
    });
  });

  it('compares every entry of a map field with the sample entry, whatever its name', () => {
    const attribute = sample.messageAttributes.myAttribute;
    const two = {
      ...structuredClone(sample),
      messageAttributes: { a: attribute, b: { dataType: 'String' } },
    };
    expect(compareShape(sample, two, ['messageAttributes']).missing).toEqual([
      'messageAttributes.b.stringValue',
      'messageAttributes.b.stringListValues',
      'messageAttributes.b.binaryListValues',
    ]);
    // An empty map in the sample: every entry is extra.
    expect(compareShape({ m: {} }, { m: { x: attribute } }, ['m']).extra).toEqual({ 'm.x': 'object' });
  });

  it('tells JSON types apart', () => {
    expect([null, [], {}, '', 0, true].map(jsonTypeOf)).toEqual([
      'null',
      'array',
      'object',
      'string',
      'number',
      'boolean',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidMessageError, InvalidRecordError } from '../../../contract/errors.js';
import { parseMessageBody, readMessageBody, receiveCountOf, runIdOf } from '../../../contract/message.js';
import { sqsRecord } from '../../support/sqs-events.js';

const valid = {
  eventId: 'evt-1',
  runId: 'run-1',
  accountId: 'acct-1',
  amountCents: 100,
  seq: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
};

function fieldOf(body: string): string {
  try {
    parseMessageBody(body);
  } catch (error) {
    if (error instanceof InvalidMessageError) return error.field;
    throw error;
  }
  throw new Error('expected the body to be rejected');
}

describe('message body validation', () => {
  it('accepts a valid body', () => {
    expect(parseMessageBody(JSON.stringify(valid))).toEqual(valid);
  });

  it.each([
    ['not JSON', 'nope', '(body)'],
    ['a float amount', JSON.stringify({ ...valid, amountCents: 1.5 }), 'amountCents'],
    ['a string amount', JSON.stringify({ ...valid, amountCents: '100' }), 'amountCents'],
    ['a zero amount', JSON.stringify({ ...valid, amountCents: 0 }), 'amountCents'],
    ['a missing eventId', JSON.stringify({ ...valid, eventId: undefined }), 'eventId'],
    ['a # in the runId', JSON.stringify({ ...valid, runId: 'a#b' }), 'runId'],
    ['an unknown field', JSON.stringify({ ...valid, note: 'x' }), 'note'],
    ['a missing createdAt', JSON.stringify({ ...valid, seq: 1, createdAt: undefined }), 'createdAt'],
    // Each of these is read differently, or not at all, by Date.parse: the guard could not date it.
    [
      'a createdAt with an offset',
      JSON.stringify({ ...valid, seq: 1, createdAt: '2024-01-01T00:00:00+01' }),
      'createdAt',
    ],
    [
      'a createdAt without a zone',
      JSON.stringify({ ...valid, seq: 1, createdAt: '2024-01-01T00:00:00' }),
      'createdAt',
    ],
    [
      'a createdAt on 30 February',
      JSON.stringify({ ...valid, seq: 1, createdAt: '2024-02-30T00:00:00Z' }),
      'createdAt',
    ],
    [
      'a createdAt as a number',
      JSON.stringify({ ...valid, seq: 1, createdAt: 1_700_000_000_000 }),
      'createdAt',
    ],
  ])('rejects %s and names the field', (_name, body, field) => {
    expect(fieldOf(body)).toBe(field);
  });

  it('attributes a record to its run by attribute first, then by body', () => {
    expect(runIdOf(sqsRecord({ ...valid, runId: 'from-both' }))).toBe('from-both');
    const noAttribute = { ...sqsRecord({ ...valid, runId: 'from-body' }), messageAttributes: {} };
    expect(runIdOf(noAttribute)).toBe('from-body');
    expect(runIdOf(sqsRecord('not json'))).toBeUndefined();
  });

  it('keeps what it would log about a rejected body short, whatever the body holds', () => {
    const huge = 'x'.repeat(500_000);
    for (const body of [
      JSON.stringify({ ...valid, amountCents: huge }),
      JSON.stringify({ ...valid, [huge]: 1 }),
    ]) {
      const error = readMessageBody(body);
      if (!(error instanceof InvalidMessageError)) throw new Error('expected the body to be rejected');
      expect(error.message.length).toBeLessThan(600);
      expect(error.field.length).toBeLessThan(300);
    }
  });

  it('reads the receive count, never defaults it', () => {
    const record = sqsRecord({ ...valid });
    expect(
      receiveCountOf({ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: '3' } }),
    ).toBe(3);
    const missing = {
      ...record,
      attributes: { ...record.attributes, ApproximateReceiveCount: undefined as unknown as string },
    };
    expect(() => receiveCountOf(missing)).toThrow(InvalidRecordError);
  });
});

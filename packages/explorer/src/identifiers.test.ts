import { describe, expect, it } from 'vitest';
import { Identifiers, powertoolsHash } from './identifiers.js';

describe('which event a request names', () => {
  const identifiers = new Identifiers(
    ['order-1', 'order-10', 'order-2'].map((id) => ({ id, aliases: id === 'order-2' ? ['ALIAS#2'] : [] })),
  );

  it('by its id, the longest that matches: order-10 is not order-1', () => {
    expect(identifiers.eventOf('{"pk":"EVENT#order-10"}')).toBe('order-10');
    expect(identifiers.eventOf('{"pk":"EVENT#order-1"}')).toBe('order-1');
  });

  it('by an alias, or by the hash Powertools keys on', () => {
    expect(identifiers.eventOf('{"pk":"ALIAS#2"}')).toBe('order-2');
    expect(identifiers.eventOf(`{"id":"idem#${powertoolsHash('order-2')}"}`)).toBe('order-2');
  });

  it('several events: batch; none: -', () => {
    expect(identifiers.eventOf('["order-1","order-2"]')).toBe('batch');
    expect(identifiers.eventOf('["order-1","order-10"]')).toBe('batch');
    expect(identifiers.eventOf('{"pk":"SKU#A"}')).toBe('-');
  });

  it("not by the cell's own names: a table called after the scenario is no event", () => {
    expect(identifiers.eventOf('{"TableName":"order-1f00-stock","Key":"SKU#A"}', ['order-1f00'])).toBe('-');
  });

  it("by the records' message ids and receipt handles once a delivery has them", () => {
    identifiers.add([{ messageId: 'm-7', receiptHandle: 'rh-7' } as never], () => 'order-2');
    expect(identifiers.eventOf('{"ReceiptHandle":"rh-7"}')).toBe('order-2');
  });
});

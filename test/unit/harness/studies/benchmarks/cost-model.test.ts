import { describe, expect, it } from 'vitest';
import { MODES } from '../../../../../contract/topology.js';
import {
  costPerMillion,
  dynamodbUsageOf,
  type ModeUsage,
  productionUsage,
} from '../../../../../harness/studies/benchmarks/cost-model.js';
import { PRICES } from '../../../../../harness/studies/benchmarks/prices.js';

/** 1,000 messages: batches of 10, 40 s billed in all, one send, receive and delete per batch, 4 WCU each. */
const USAGE: ModeUsage = {
  messages: 1000,
  lambda: { invocations: 100, billedDurationMs: 40_000 },
  sqs: { sendRequests: 100, receiveRequests: 100, emptyReceives: 50, deleteRequests: 100 },
  dynamodb: { requests: 1000, writeUnits: 4000, readUnits: 0 },
};

describe('the prices the cost model uses', () => {
  it('are us-east-1 on-demand, with DynamoDB after the November 2024 cut', () => {
    expect(PRICES.region).toBe('us-east-1');
    expect(PRICES.lambda.perMillionRequests).toBe(0.2);
    expect(PRICES.lambda.perGbSecondArm64).toBe(0.0000133334);
    expect(PRICES.sqs.perMillionRequests).toBe(0.4);
    expect(PRICES.sqs.perMillionFifoRequests).toBe(0.5);
    expect(PRICES.dynamodb.perMillionWriteRequestUnits).toBe(0.625);
    expect(PRICES.dynamodb.perMillionReadRequestUnits).toBe(0.125);
  });
});

describe('cost per million messages, from counted usage', () => {
  it('divides the usage by the messages and prices each service', () => {
    expect(MODES['effectively-once'].memoryMb).toBe(256);

    const cost = costPerMillion('effectively-once', USAGE);

    expect(cost.perMessage).toEqual({
      lambdaRequests: 0.1,
      // 40 s × 0.25 GB over 1,000 messages.
      lambdaGbSeconds: 0.01,
      // Sends, non-empty receives and deletes; the 50 empty polls are not per message.
      sqsRequests: 0.3,
      dynamodbRequests: 1,
      writeUnits: 4,
      readUnits: 0,
    });
    expect(cost.usdPerMillion).toEqual({
      // 0.1 × $0.20 + 10,000 GB-s × $0.0000133334 = 0.02 + 0.133334
      lambda: 0.153,
      // 0.3 × $0.40
      sqs: 0.12,
      // 4 WCU × $0.625: a transaction of two small items costs $2.50 per million messages.
      dynamodb: 2.5,
      total: 2.773,
    });
  });

  it("prices a FIFO mode's SQS requests at the FIFO rate, and only those", () => {
    const fifo = costPerMillion('fifo-versioned', USAGE);
    const standard = costPerMillion('effectively-once', USAGE);
    // 0.3 × $0.50 against 0.3 × $0.40
    expect(fifo.usdPerMillion.sqs).toBe(0.15);
    expect(standard.usdPerMillion.sqs).toBe(0.12);
    expect(fifo.usdPerMillion.dynamodb).toBe(standard.usdPerMillion.dynamodb);
  });

  it('prices read units apart from write units', () => {
    const cost = costPerMillion('at-least-once', {
      ...USAGE,
      dynamodb: { requests: 3000, writeUnits: 2000, readUnits: 1000 },
    });
    expect(cost.perMessage).toMatchObject({ dynamodbRequests: 3, writeUnits: 2, readUnits: 1 });
    expect(cost.usdPerMillion.dynamodb).toBe(2 * 0.625 + 0.125);
  });

  it('leaves empty receives out, and never divides by zero messages', () => {
    const busyPolling = costPerMillion('effectively-once', {
      ...USAGE,
      sqs: { ...USAGE.sqs, emptyReceives: 10_000 },
    });
    expect(busyPolling).toEqual(costPerMillion('effectively-once', USAGE));

    const none = costPerMillion('effectively-once', {
      messages: 0,
      lambda: { invocations: 1, billedDurationMs: 1000 },
      sqs: { sendRequests: 1, receiveRequests: 0, emptyReceives: 0, deleteRequests: 0 },
      dynamodb: { requests: 0, writeUnits: 0, readUnits: 0 },
    });
    expect(none.perMessage).toMatchObject({ lambdaRequests: 1, lambdaGbSeconds: 0.25, sqsRequests: 1 });
    expect(Number.isFinite(none.usdPerMillion.total)).toBe(true);
  });

  it('rounds per-message figures to 4 decimals and dollars to 3', () => {
    const cost = costPerMillion('at-most-once', {
      ...USAGE,
      messages: 3,
      lambda: { invocations: 1, billedDurationMs: 0 },
      sqs: { sendRequests: 1, receiveRequests: 0, emptyReceives: 0, deleteRequests: 0 },
      dynamodb: { requests: 1, writeUnits: 1, readUnits: 0 },
    });
    expect(cost.perMessage.lambdaRequests).toBe(0.3333);
    expect(cost.perMessage.writeUnits).toBe(0.3333);
    // (1/3) × 0.625 = 0.20833…
    expect(cost.usdPerMillion.dynamodb).toBe(0.208);
    // Lambda (1/3) × $0.20, SQS (1/3) × $0.40; the total adds the unrounded figures.
    expect(cost.usdPerMillion.lambda).toBe(0.067);
    expect(cost.usdPerMillion.sqs).toBe(0.133);
    expect(cost.usdPerMillion.total).toBe(0.408);
  });
});

describe('the meter’s counts as billed DynamoDB usage', () => {
  const counts = (requests: number, ruleWriteUnits: number, consumedUnits: number) => ({
    requests,
    failed: 0,
    consumedUnits,
    ruleWriteUnits,
    failedRuleWriteUnits: 0,
    maxItemBytes: 100,
  });

  it('bills writes by the rules and reads as reported, and keeps the reported writes apart', () => {
    expect(
      dynamodbUsageOf({
        TransactWriteItems: counts(100, 400, 200),
        UpdateItem: counts(10, 10, 10),
        Query: counts(2, 0, 3),
      }),
    ).toEqual({ requests: 112, writeUnits: 410, readUnits: 3, reportedWriteUnits: 210 });
  });
});

describe('a production shape’s usage', () => {
  it('is its own DynamoDB with its mode’s Lambda and SQS, scaled to its messages', () => {
    const dynamodb = { requests: 550, writeUnits: 550, readUnits: 0 };

    expect(productionUsage(500, dynamodb, USAGE)).toEqual({
      messages: 500,
      lambda: { invocations: 50, billedDurationMs: 20_000 },
      sqs: { sendRequests: 50, receiveRequests: 50, emptyReceives: 25, deleteRequests: 50 },
      dynamodb,
    });
    // One write unit and request per message where the transaction has 4: the honest price.
    const cost = costPerMillion('at-least-once', productionUsage(1000, dynamodb, USAGE));
    expect(cost.perMessage.writeUnits).toBe(0.55);
    expect(cost.usdPerMillion.dynamodb).toBe(0.344);
  });
});

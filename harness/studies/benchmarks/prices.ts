/**
 * On-demand AWS prices the cost model uses: the only place they live. us-east-1 (N. Virginia),
 * read in November 2026 from AWS's pricing pages (the URL of each); no free tier, no savings plans,
 * first pricing tier only.
 *
 * DynamoDB: AWS cut on-demand throughput prices by 50% on 1 November 2024 ("Amazon DynamoDB
 * reduces prices for on-demand throughput by 50%"): $1.25 → $0.625 per million write request units,
 * $0.25 → $0.125 per million read request units (Standard table class). Older calculators and
 * blog posts still show the old numbers.
 */
export const PRICES = {
  region: 'us-east-1',
  readOn: '2026-11',
  lambda: {
    /** Per request, every architecture. */
    perMillionRequests: 0.2,
    /** arm64 (the stack's functions), first 7.5 billion GB-seconds a month. */
    perGbSecondArm64: 0.0000133334,
    source: 'https://aws.amazon.com/lambda/pricing/',
  },
  sqs: {
    /** Standard queues, from 1 million to 100 billion requests a month; each 64 KB chunk of a payload is one request. */
    perMillionRequests: 0.4,
    /** FIFO queues, the same tier: 25% more per request. */
    perMillionFifoRequests: 0.5,
    source: 'https://aws.amazon.com/sqs/pricing/',
  },
  dynamodb: {
    /** On-demand, Standard table class, since the 1 November 2024 price cut. */
    perMillionWriteRequestUnits: 0.625,
    perMillionReadRequestUnits: 0.125,
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
} as const;

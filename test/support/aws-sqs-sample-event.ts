/**
 * AWS's documented SQS event for a standard queue, copied field by field from the Lambda developer
 * guide, "Using Lambda with Amazon SQS", section "Example standard queue message event":
 * https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html#example-standard-queue-message-event
 * Deliberately not typed as SQSEvent: it is what AWS documents, the yardstick for the records the
 * local event source mapping builds, not what @types/aws-lambda allows.
 */
export const AWS_STANDARD_QUEUE_SAMPLE_EVENT = {
  Records: [
    {
      messageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
      receiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a...',
      body: 'Test message.',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '1545082649183',
        SenderId: 'AIDAIENQZJOLO23YVJ4VO',
        ApproximateFirstReceiveTimestamp: '1545082649185',
      },
      messageAttributes: {
        myAttribute: {
          stringValue: 'myValue',
          stringListValues: [],
          binaryListValues: [],
          dataType: 'String',
        },
      },
      md5OfBody: 'e4e68fb7bd0e697a0ae8f1bb342846b3',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-2:123456789012:my-queue',
      awsRegion: 'us-east-2',
    },
    {
      messageId: '2e1424d4-f796-459a-8184-9c92662be6da',
      receiptHandle: 'AQEBzWwaftRI0KuVm4tP+/7q1rGgNqicHq...',
      body: 'Test message.',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '1545082650636',
        SenderId: 'AIDAIENQZJOLO23YVJ4VO',
        ApproximateFirstReceiveTimestamp: '1545082650649',
      },
      messageAttributes: {},
      md5OfBody: 'e4e68fb7bd0e697a0ae8f1bb342846b3',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-2:123456789012:my-queue',
      awsRegion: 'us-east-2',
    },
  ],
} as const;

/** The sample's first record: a message with a String message attribute. */
export const AWS_SAMPLE_RECORD_WITH_ATTRIBUTES = AWS_STANDARD_QUEUE_SAMPLE_EVENT.Records[0];
/** The sample's second record: a message without message attributes. */
export const AWS_SAMPLE_RECORD_WITHOUT_ATTRIBUTES = AWS_STANDARD_QUEUE_SAMPLE_EVENT.Records[1];

/**
 * Fields a record Lambda delivers carries beyond the documented sample, and why: the sample omits
 * md5OfMessageAttributes, which real records carry for a message with attributes (@types/aws-lambda's
 * SQSRecord has it; so do events recorded from Lambda, e.g. Powertools' parser tests and issue
 * aws-powertools/powertools-lambda-typescript#4631).
 */
export const FIELDS_BEYOND_THE_SAMPLE = { md5OfMessageAttributes: 'string' } as const;

/** How two values differ in structure (field names and JSON types, not values), by path. */
export interface ShapeDifferences {
  /** In the expected value, not in the actual one. */
  readonly missing: string[];
  /** In both, with different JSON types (string, number, boolean, null, array, object). */
  readonly mistyped: string[];
  /** In the actual value only, with its JSON type. */
  readonly extra: Record<string, string>;
}

export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * Compares the structure of `actual` with `expected`, field by field, recursively through objects.
 * A field named in `maps` is a map whose keys are names (SQS message attributes): each of its
 * entries in `actual` is compared with the first entry in `expected`.
 */
export function compareShape(
  expected: unknown,
  actual: unknown,
  maps: readonly string[] = [],
  path = '',
): ShapeDifferences {
  const differences: ShapeDifferences = { missing: [], mistyped: [], extra: {} };
  const add = (more: ShapeDifferences) => {
    differences.missing.push(...more.missing);
    differences.mistyped.push(...more.mistyped);
    Object.assign(differences.extra, more.extra);
  };
  if (jsonTypeOf(expected) !== jsonTypeOf(actual)) {
    differences.mistyped.push(
      `${path || '(root)'}: ${jsonTypeOf(expected)} expected, ${jsonTypeOf(actual)} found`,
    );
    return differences;
  }
  if (jsonTypeOf(expected) !== 'object') return differences;
  const want = expected as Record<string, unknown>;
  const have = actual as Record<string, unknown>;
  const name = path.split('.').at(-1) ?? '';
  if (maps.includes(name)) {
    const template = Object.values(want)[0];
    for (const [key, value] of Object.entries(have)) {
      if (template === undefined) differences.extra[`${path}.${key}`] = jsonTypeOf(value);
      else add(compareShape(template, value, maps, `${path}.${key}`));
    }
    return differences;
  }
  for (const [key, value] of Object.entries(want)) {
    const at = path ? `${path}.${key}` : key;
    if (!(key in have)) differences.missing.push(at);
    else add(compareShape(value, have[key], maps, at));
  }
  for (const [key, value] of Object.entries(have)) {
    if (!(key in want)) differences.extra[path ? `${path}.${key}` : key] = jsonTypeOf(value);
  }
  return differences;
}

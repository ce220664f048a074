import { randomUUID } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';

/** What goes back to the client (an answer of DynamoDB's, or one made here); the length is set when it is sent. */
export interface ProxyAnswer {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer;
}

const ERROR_NAMESPACE = 'com.amazonaws.dynamodb.v20120810';

export interface DynamoDbError {
  readonly status: number;
  /** The error's name, as the SDK will throw it (`ThrottlingException`, …). */
  readonly type: string;
  readonly message: string;
  /** Fields of the error body beyond the name and message (a cancellation's reasons). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** DynamoDB's JSON 1.0 error shape: the SDK reads the name from `__type` (or x-amzn-ErrorType). */
export function errorAnswer(error: DynamoDbError): ProxyAnswer {
  const body = JSON.stringify({
    __type: `${ERROR_NAMESPACE}#${error.type}`,
    message: error.message,
    ...error.details,
  });
  return {
    status: error.status,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-ErrorType': error.type,
      'x-amzn-RequestId': randomUUID(),
    },
    body: Buffer.from(body, 'utf8'),
  };
}

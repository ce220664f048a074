/**
 * For a team's own tests of its handler (`@sqs-delivery-semantics/consumer-cores/testing`): SQS
 * records and events as the event source mapping delivers them, and DynamoDB Local on a free port.
 */
export {
  type DynamoDbLocal,
  DynamoDbLocalError,
  startDynamoDbLocal,
  waitForDynamoDbLocal,
} from './dynamodb-local.js';
export { redelivered, resent, type SqsRecordOptions, sqsEvent, sqsRecord } from './sqs.js';

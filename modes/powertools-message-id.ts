import { powertoolsMode } from './families/powertools.js';
import type { IdempotencyKeying } from './kit/idempotency.js';

export { type PowertoolsConsumerDeps, processBatch } from './families/powertools.js';

/**
 * powertools-message-id: the Powertools idempotency utility set up as its docs' SQS batch example
 * is — "Batch integration", https://docs.powertools.aws.dev/lambda/typescript/latest/features/idempotency/#batch-integration
 * (examples/snippets/idempotency/workingWithBatch.ts): `makeIdempotent` around the record handler,
 * keyed on the record's `messageId`, the default expiry (one hour), `registerLambdaContext(context)`,
 * `BatchProcessor` + `processPartialResponse`. The consumer is powertools-idempotency's
 * (modes/families/powertools.ts); only the key differs, and with it what counts as "the same":
 * SQS's redelivery of one message keeps its messageId and is skipped once COMPLETED, but a producer
 * re-send of an event is another message with another messageId, and so is every copy a DLQ redrive
 * sends back: each is credited again. What departs from the snippet is common to both Powertools
 * modes and none of it is about the key: the key prefix is the mode (the stack's IAM binds each
 * function to its own prefix), a response hook counts the suppressed duplicates, the body is
 * validated before the idempotent call, and the records are processed one after another.
 */
export const KEYING: IdempotencyKeying = {
  // The key is selected from the SQS record as delivered, as in the docs' example.
  keyedOn: 'record',
  // The docs' configuration, unchanged: no payload validation (one messageId has one body) and
  // Powertools' default expiry of a COMPLETED record, 3600 s.
  options: { eventKeyJmesPath: 'messageId' },
  remembers: 'powertools-default',
};

export const consumer = powertoolsMode('powertools-message-id', KEYING);
export const { createIdempotency, handler } = consumer;

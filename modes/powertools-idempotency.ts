import { powertoolsMode } from './families/powertools.js';
import type { IdempotencyKeying } from './kit/idempotency.js';

export { type PowertoolsConsumerDeps, processBatch } from './families/powertools.js';

/**
 * powertools-idempotency: what a team gets from the Powertools utilities used as documented, keyed
 * on the producer's event id (modes/families/powertools.ts has the consumer). A producer re-send
 * and every redelivery of an event share its key, so a COMPLETED event is skipped. But the
 * idempotency record and the credit are two writes, not one transaction: a crash between the credit
 * and COMPLETED leaves an INPROGRESS record, and once its in-progress expiry (the invocation's
 * remaining time, registered from the Lambda context) has passed, the redelivery takes the record
 * over and credits again.
 */
export const KEYING: IdempotencyKeying = {
  // The key is selected from the validated message body.
  keyedOn: 'body',
  options: {
    // The producer's event id within its run: event ids repeat across runs (`evt-000000`…), as
    // the ledger's markers do per run partition. Keyed on the id alone, a second run against the
    // same stack would find the first run's COMPLETED records and skip every event.
    eventKeyJmesPath: '[runId, eventId]',
    // A reused id with another account or amount is not a duplicate: Powertools throws
    // IdempotencyValidationError, the record fails and ends in the DLQ, as in effectively-once.
    payloadValidationJmesPath: '[accountId, amountCents]',
    // The key comes from a validated body, so a missing key is a bug: fail, never skip idempotency.
    throwOnNoIdempotencyKey: true,
  },
  // Powertools' default is one hour. A COMPLETED record must outlive every event the age guard
  // accepts, like the ledger's markers: the deployment's marker retention (contract/retention.ts).
  remembers: 'marker-retention',
};

export const consumer = powertoolsMode('powertools-idempotency', KEYING);
export const { createIdempotency, handler } = consumer;

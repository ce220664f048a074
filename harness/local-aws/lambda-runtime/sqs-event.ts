import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { recordAttribution } from '../../../contract/message.js';

export { recordsToDelete, toSqsRecord } from '@sqs-delivery-semantics/explorer/mapping';

export function toSqsEvent(records: SQSRecord[]): SQSEvent {
  return { Records: records };
}

/**
 * What fault draws are keyed on: the event the record names (the producer's eventId attribute,
 * which even a malformed body carries, else the body's), so every mode — whose SQS message ids
 * differ — gets the same schedule; the message id only when nothing names an event.
 */
export function faultKeyOf(record: SQSRecord): string {
  return recordAttribution(record).eventId ?? record.messageId;
}

export { receiveCountOf } from '../../../contract/message.js';

import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ageGuardFor } from './age-guard.js';
import {
  createEffectivelyOnceHandler,
  type EffectivelyOnceOptions,
  type TransactItem,
} from './effectively-once.js';
import type { ConsumerEvent } from './event.js';

export interface CallThenRecordOptions<E extends ConsumerEvent, R>
  extends Omit<EffectivelyOnceOptions<E>, 'writesFor'> {
  /**
   * The call to the outside API, made first. Give it an idempotency key the API honours (the event
   * id): a crash after the call and before the record delivers the event again, and only the API
   * can make that second call harmless.
   */
  readonly call: (event: NoInfer<E>, record: SQSRecord) => Promise<R>;
  /** The writes that record the call's result, with the marker, in one transaction. */
  readonly writesFor: (
    event: NoInfer<E>,
    result: R,
    record: SQSRecord,
  ) => TransactItem[] | Promise<TransactItem[]>;
  /**
   * How long the API remembers an idempotency key (Stripe: at least 24 hours). The age guard uses
   * the shorter of this and the marker's TTL: past either, a repeat would call or record again.
   * @default the marker TTL
   */
  readonly keyRetentionSeconds?: number;
}

/**
 * An SQS handler for a side effect outside DynamoDB: call the API, then record its result in
 * effectively-once's marker transaction. The two cannot share a transaction, so the order decides
 * what a crash between them does: the call is made and not recorded, and the redelivery calls
 * again. The record stays exact either way (the marker decides it); whether the outside world saw
 * one call or two depends on the idempotency key alone (docs/side-effects.md).
 *
 * @example
 * ```ts
 * // The event and result types given: TypeScript does not infer them from `parse` and `call`.
 * export const handler = createCallThenRecordHandler<v.InferOutput<typeof Charge>, Stripe.Charge>({
 *   ddb,
 *   markerTable: 'ledger',
 *   parse: parseWith(Charge),
 *   call: (event) => stripe.charges.create({ amount: event.amountCents, currency: 'usd' }, { idempotencyKey: event.eventId }),
 *   writesFor: (event, charge) => [{ Put: { TableName: 'charges', Item: { pk: `CHARGE#${charge.id}`, eventId: event.eventId } } }],
 *   keyRetentionSeconds: 24 * 3600,
 * });
 * ```
 */
export function createCallThenRecordHandler<E extends ConsumerEvent = ConsumerEvent, R = unknown>(
  options: CallThenRecordOptions<E, R>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const markerTtl = options.markerTtlSeconds ?? 30 * 24 * 3600;
  const guardTtl = Math.min(markerTtl, options.keyRetentionSeconds ?? markerTtl);
  return createEffectivelyOnceHandler<E>({
    ...options,
    ageGuard: options.ageGuard ?? ageGuardFor(guardTtl),
    // After the age guard, before the transaction: the call first, then its record.
    writesFor: async (event, record) => options.writesFor(event, await options.call(event, record), record),
  });
}

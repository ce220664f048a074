import { createCallThenRecordHandler } from '@sqs-delivery-semantics/consumer-cores/call-then-record';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { requireEnv, requireRate, requireSwitch } from '../../contract/config.js';
import { COUNTERS } from '../../contract/ledger-keys.js';
import { type MessageBody, receiveCountOf } from '../../contract/message.js';
import { PROVIDER_KEY_RETENTION_SECONDS, type Retention, retentionOf } from '../../contract/retention.js';
import { chargeOf } from '../../contract/topology.js';
import { type ChargeDeps, createPaymentClient } from '../../services/payment-provider/client.js';
import { type ConsumerDeps, countDeliveries } from '../kit/consumer.js';
import { crashDraw } from '../kit/crash.js';
import { labMode } from '../kit/lab-mode.js';
import { addToCounter } from '../kit/ledger.js';
import { creditBalance, markerLab } from '../kit/marker-lab.js';

export const CHARGE_CURRENCY = 'usd';

/**
 * The provider keeps a key for 24 hours, the marker for its own TTL: a redelivery older than the
 * shorter one would find one of them forgotten and charge (or credit) again. With a key, the age
 * guard therefore uses the shorter retention; without one, only the marker's matters.
 */
export function chargeRetention(marker: Retention, idempotencyKey: boolean): Retention {
  return idempotencyKey && PROVIDER_KEY_RETENTION_SECONDS < marker.markerTtlSeconds
    ? retentionOf(PROVIDER_KEY_RETENTION_SECONDS)
    : marker;
}

/** The key a charge carries: one per event of one run (event ids start over every run). */
export function idempotencyKeyOf(message: MessageBody): string {
  return `${message.runId}:${message.eventId}`;
}

/**
 * A side effect outside DynamoDB, as the lab runs it: the core (packages/consumer-cores/src/call-then-record.ts:
 * call the API, then record its result in effectively-once's marker transaction) with the lab's
 * call, a charge at the payment provider with or without the event's key (`idempotencyKey`), and
 * the lab's marker instruments (modes/kit/marker-lab.ts). From outside the core: the
 * provider's lost responses (drawn per event, delivery and attempt), counted; the crash "after the
 * charge, before it is recorded", drawn once the charge has answered; the charge's id added to the
 * marker as evidence.
 *
 * The marker still decides the ledger: a redelivery after the record finds it and is skipped, so the
 * balance is exact in both modes; what differs is what the card was charged.
 */
export async function chargeThenRecord(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
  charge: ChargeDeps,
  idempotencyKey: boolean,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const retention = chargeRetention(deps.config.retention, idempotencyKey);
  const lab = markerLab(deps, context, event, retention);
  const core = createCallThenRecordHandler<MessageBody, { readonly chargeId: string }>({
    ...lab.options,
    call: async (message, record) => {
      const receiveCount = receiveCountOf(record);
      let responsesLost = 0;
      const loseResponse = (attempt: number): boolean => {
        // Drawn per event, delivery and attempt from the crash seed: the same lost responses in both
        // charge modes and on every replay of the seed.
        const lost =
          charge.lostResponseRate > 0 &&
          crashDraw(
            `${deps.config.crashSeed}\0provider-lost-response`,
            `${message.eventId}#${attempt}`,
            receiveCount,
          ) < charge.lostResponseRate;
        if (lost) responsesLost += 1;
        return lost;
      };
      const { chargeId } = await charge.payments.charge(
        {
          account: message.accountId,
          amountCents: message.amountCents,
          currency: CHARGE_CURRENCY,
          metadata: { runId: message.runId, mode: deps.config.mode, eventId: message.eventId },
        },
        { ...(idempotencyKey ? { idempotencyKey: idempotencyKeyOf(message) } : {}), loseResponse },
      );
      if (responsesLost > 0) {
        await addToCounter(deps.ledger, message.runId, COUNTERS.providerResponsesLost, responsesLost);
      }
      await deps.crash.maybeCrash({
        runId: message.runId,
        key: message.eventId,
        receiveCount,
        where: 'after the charge, before it is recorded',
      });
      lab.addToMarker(message, { chargeId });
      return { chargeId };
    },
    writesFor: (message) => [creditBalance(deps.ledger, message)],
  });
  return core(event);
}

/** A charge mode of the lab: the provider's client from the environment, the key as the topology says. */
export function chargeMode<M extends 'charge-no-key' | 'charge-with-key'>(mode: M) {
  const settings = chargeOf(mode);
  if (settings === undefined) throw new Error(`${mode} has no charge in contract/topology.ts`);
  return labMode<M>({
    mode,
    needsFromEnvironment: () => ({
      charge: {
        payments: createPaymentClient({
          url: requireEnv('PROVIDER_URL'),
          sign: requireSwitch('PROVIDER_SIGN'),
          ...(process.env.AWS_REGION ? { region: process.env.AWS_REGION } : {}),
        }),
        lostResponseRate: requireRate('PROVIDER_LOST_RESPONSE_RATE'),
      },
    }),
    processBatch: (event, context, deps) =>
      chargeThenRecord(event, context, deps, deps.charge, settings.idempotencyKey),
  });
}

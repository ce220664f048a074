import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { COUNTERS } from '../../contract/ledger-keys.js';
import { PROVIDER_KEY_RETENTION_SECONDS, type Retention, retentionOf } from '../../contract/retention.js';
import { chargeOf, type Mode } from '../../contract/topology.js';
import { refuseIfTooOld } from './age-guard.js';
import { readConsumerConfig, requireEnv, requireRate, requireSwitch } from './config.js';
import { type ConsumerDeps, createConsumerDeps } from './consumer.js';
import { crashDraw } from './crash.js';
import { addToCounter, type CreditOutcome, creditAccount } from './ledger.js';
import type { MessageBody } from './message.js';
import { createPaymentClient, type PaymentClient } from './payment-client.js';
import { type ApplyMessage, workThenAcknowledge } from './work-then-acknowledge.js';

/** What a charge mode needs besides a consumer's deps: the provider, and its fault. */
export interface ChargeDeps {
  readonly payments: PaymentClient;
  /** Probability, per request, that the provider executes the charge and its response is lost. */
  readonly lostResponseRate: number;
}

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
 * A side effect outside DynamoDB: charge the card first, then record the charge in
 * effectively-once's marker transaction. The two cannot share a transaction (the provider is
 * another company's API), so the order decides what a crash between them does: the charge is made
 * and not recorded, and the redelivery charges again. Only the provider can make that repeat
 * harmless, and only if the charge carries a key it remembers: `idempotencyKey`.
 *
 * The marker still decides the ledger: a redelivery after the record finds it and is skipped, so the
 * balance is exact in both modes; what differs is what the card was charged.
 */
export function applyChargeThenRecord(charge: ChargeDeps, idempotencyKey: boolean): ApplyMessage {
  return async (deps, message, delivery): Promise<CreditOutcome> => {
    await refuseIfTooOld(deps.ledger, message, {
      enabled: deps.config.ageGuard,
      retention: chargeRetention(deps.config.retention, idempotencyKey),
    });
    let responsesLost = 0;
    const loseResponse = (attempt: number): boolean => {
      // Drawn per event, delivery and attempt from the crash seed: the same lost responses in both
      // charge modes and on every replay of the seed.
      const lost =
        charge.lostResponseRate > 0 &&
        crashDraw(
          `${deps.config.crashSeed}\0provider-lost-response`,
          `${message.eventId}#${attempt}`,
          delivery.receiveCount,
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
      {
        ...(idempotencyKey ? { idempotencyKey: idempotencyKeyOf(message) } : {}),
        loseResponse,
      },
    );
    if (responsesLost > 0) {
      await addToCounter(deps.ledger, message.runId, COUNTERS.providerResponsesLost, responsesLost);
    }
    await deps.crash.maybeCrash({
      runId: message.runId,
      key: message.eventId,
      receiveCount: delivery.receiveCount,
      where: 'after the charge, before it is recorded',
    });
    const outcome = await creditAccount(deps.ledger, message, delivery, { idempotent: true, chargeId });
    if (outcome === 'duplicate') {
      deps.logger.info('already recorded: this delivery charged nothing new only if it carried a key', {
        eventId: message.eventId,
        chargeId,
        idempotencyKey,
      });
      await addToCounter(deps.ledger, message.runId, COUNTERS.suppressedDuplicates, 1);
    }
    return outcome;
  };
}

/** A charge mode's exports: `processBatch` with injected deps (unit tests), and the Lambda handler. */
export function chargeMode(mode: Mode) {
  const settings = chargeOf(mode);
  if (settings === undefined) throw new Error(`${mode} has no charge in contract/topology.ts`);
  const processBatch = (
    event: SQSEvent,
    context: Pick<Context, 'awsRequestId'>,
    deps: ConsumerDeps,
    charge: ChargeDeps,
  ): Promise<SQSBatchResponse> =>
    workThenAcknowledge(event, context, deps, applyChargeThenRecord(charge, settings.idempotencyKey));
  const deps = createConsumerDeps(readConsumerConfig(mode));
  const charge: ChargeDeps = {
    payments: createPaymentClient({
      url: requireEnv('PROVIDER_URL'),
      sign: requireSwitch('PROVIDER_SIGN'),
      ...(process.env.AWS_REGION ? { region: process.env.AWS_REGION } : {}),
    }),
    lostResponseRate: requireRate('PROVIDER_LOST_RESPONSE_RATE'),
  };
  return {
    processBatch,
    handler: (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
      deps.logger.addContext(context);
      return processBatch(event, context, deps, charge);
    },
  };
}

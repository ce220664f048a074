import { crashDraw } from '../../../modes/kit/crash.js';

/**
 * The faults an experiment can inject besides the handlers' own crash points (docs/design.md,
 * "Fault model"). Every one is drawn from the run's seed, keyed on the event (never on an SQS message id,
 * which differs between modes), so every mode gets the same schedule. They live in the producer
 * and the local runtime; the handler code stays exactly what is deployed.
 */
export interface FaultSettings {
  /** Probability that the producer sends an event as an invalid body instead (poison). */
  readonly poisonRate: number;
  /** Probability that the producer sends an event a second time (same event id, new SQS message). */
  readonly producerDuplicateRate: number;
  /** Probability, per successfully processed record, that the local event source mapping delivers it again. */
  readonly redeliveryRate: number;
  /** Probability, per DynamoDB request of a handler, of a throttle, a 5xx or a lost response (local only). */
  readonly throttleRate: number;
  /** Extra time a slow invocation spends before its work, in ms (0: none). */
  readonly workDelayMs: number;
  /** Probability, per invocation, that it is slow by workDelayMs. */
  readonly workDelayRate: number;
  /** Probability, per invocation, that the environment is SIGKILLed at a random moment of it. */
  readonly killRate: number;
  /**
   * A DynamoDB outage for the handlers (local only): from `afterSeconds` after the first send,
   * every data-path request fails for `forSeconds`. @default none
   */
  readonly outage?: { readonly afterSeconds: number; readonly forSeconds: number } | undefined;
  /** Probability, per charge request of a charge mode, that the provider charges and the response is lost. */
  readonly providerLostResponseRate?: number;
  /** `--producer dual-write`: probability, per event, that the producer is killed between commit and send. */
  readonly producerCrashRate?: number;
  /** `--producer outbox`: probability, per batch sent, that the relay is killed before its checkpoint. */
  readonly relayCrashRate?: number;
}

export const NO_FAULTS: FaultSettings = {
  poisonRate: 0,
  producerDuplicateRate: 0,
  redeliveryRate: 0,
  throttleRate: 0,
  workDelayMs: 0,
  workDelayRate: 0,
  killRate: 0,
};

/** True if any fault (beyond the handlers' crash points) is switched on. */
export function anyFault(faults: FaultSettings): boolean {
  return (
    faults.poisonRate > 0 ||
    faults.producerDuplicateRate > 0 ||
    faults.redeliveryRate > 0 ||
    faults.throttleRate > 0 ||
    (faults.workDelayMs > 0 && faults.workDelayRate > 0) ||
    faults.killRate > 0 ||
    (faults.outage?.forSeconds ?? 0) > 0 ||
    (faults.providerLostResponseRate ?? 0) > 0 ||
    (faults.producerCrashRate ?? 0) > 0 ||
    (faults.relayCrashRate ?? 0) > 0
  );
}

/**
 * A number in [0, 1) that depends only on (seed, fault kind, key, n, redrive count): the same event
 * gets the same draw in every mode and every replay of the seed, and each kind of fault draws
 * independently. `n` is usually the receive count, so a redelivery gets a fresh draw; the redrive
 * count (the copy's redriveCount attribute, 0 when absent) makes a redriven copy, whose receive
 * count starts over, draw afresh too. At 0 the draw is the one from before redrive counts existed.
 */
export function faultDraw(seed: string, kind: string, key: string, n = 0, redriveCount = 0): number {
  return crashDraw(`${seed}\0${kind}`, key, n, redriveCount);
}

/** Whether a fault of `kind` with probability `rate` hits (seed, key, n, redrive count). */
export function faultHits(
  rate: number,
  seed: string,
  kind: string,
  key: string,
  n = 0,
  redriveCount = 0,
): boolean {
  return rate > 0 && faultDraw(seed, kind, key, n, redriveCount) < rate;
}

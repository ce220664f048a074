import type { Mode, ModeSettings } from './topology.js';

/** The variable that names a consumer's idempotency table, for modes with `idempotencyTable`. */
export const IDEMPOTENCY_TABLE_ENV = 'IDEMPOTENCY_TABLE_NAME';

/**
 * The environment variables of each function, in one place: the stack deploys them and the local
 * runtime sets the same ones, so a handler cannot work locally and fail to configure on AWS.
 */
export function consumerEnvironment(
  settings: ModeSettings,
  values: {
    readonly tableName: string;
    readonly queueUrl: string;
    readonly crashRate: number;
    readonly crashSeed: string;
    /** Deliveries that always crash, `<eventId>@<receiveCount>` (local demonstrations). @default none */
    readonly crashAt?: readonly string[];
    /** Required when the mode has `idempotencyTable`; ignored otherwise. */
    readonly idempotencyTableName?: string;
    /** How long the dedupe records remember an event (contract/retention.ts). */
    readonly markerTtlSeconds: number;
    /** Whether the consumers that dedupe refuse events older than their records remember. */
    readonly ageGuard: boolean;
    /** Required when the mode has `charge`; ignored otherwise. */
    readonly provider?: PaymentProviderValues;
  },
): Record<string, string> {
  return {
    TABLE_NAME: values.tableName,
    CRASH_RATE: String(values.crashRate),
    CRASH_SEED: values.crashSeed,
    CRASH_AT: values.crashAt && values.crashAt.length > 0 ? values.crashAt.join(',') : 'none',
    MARKER_TTL_SECONDS: String(values.markerTtlSeconds),
    AGE_GUARD: values.ageGuard ? 'on' : 'off',
    // Only the modes that act on their own queue are told where it is: at-most-once deletes its
    // batch; a FIFO mode releases a batch's failed records at once after a gap (fifo-versioned).
    ...(settings.deletesOwnBatch || settings.queue === 'fifo' ? { QUEUE_URL: values.queueUrl } : {}),
    // Only the modes that keep idempotency records apart are told where; the others never see it.
    ...(settings.idempotencyTable ? { [IDEMPOTENCY_TABLE_ENV]: idempotencyTableOf(values) } : {}),
    // Only the charge modes are told where the payment provider is.
    ...(settings.charge ? providerEnvironment(values.provider) : {}),
  };
}

/** Where a charge mode finds the payment provider, and the provider's injected fault. */
export interface PaymentProviderValues {
  readonly url: string;
  /** Sign requests with SigV4 (a Function URL with AWS_IAM auth); the embedded provider needs none. */
  readonly sign: boolean;
  /** Probability, per request, that the charge executes and its response is lost. */
  readonly lostResponseRate: number;
}

function providerEnvironment(provider: PaymentProviderValues | undefined): Record<string, string> {
  if (provider === undefined || provider.url === '') {
    throw new Error('a mode with charge needs the payment provider in its environment values');
  }
  return {
    PROVIDER_URL: provider.url,
    PROVIDER_SIGN: provider.sign ? 'on' : 'off',
    PROVIDER_LOST_RESPONSE_RATE: String(provider.lostResponseRate),
  };
}

/** Fails at synth (or at the local start), not at the function's cold start. */
function idempotencyTableOf(values: { readonly idempotencyTableName?: string }): string {
  if (values.idempotencyTableName === undefined || values.idempotencyTableName === '') {
    throw new Error('a mode with idempotencyTable needs idempotencyTableName in its environment values');
  }
  return values.idempotencyTableName;
}

export function verifierEnvironment(values: {
  readonly tableName: string;
  /** The deployed modes' DLQs: the verifier verifies those modes. */
  readonly deadLetterQueueUrls: Readonly<Partial<Record<Mode, string>>>;
  /** JSON encoder; the stack passes Stack.toJsonString so that unresolved tokens survive. */
  readonly toJson?: (value: unknown) => string;
  /**
   * The DLQ sweep's receive wait. Only for an SQS with one copy of each queue (an emulator), where
   * an empty short poll is conclusive; AWS needs the default long poll. @default unset (1 s)
   */
  readonly dlqSweepWaitSeconds?: number;
  /** The payment provider's table, read for the charge modes' charges. @default unset: no charge mode */
  readonly providerTableName?: string;
}): Record<string, string> {
  const toJson = values.toJson ?? JSON.stringify;
  return {
    TABLE_NAME: values.tableName,
    DEAD_LETTER_QUEUE_URLS: toJson(values.deadLetterQueueUrls),
    ...(values.dlqSweepWaitSeconds !== undefined
      ? { DLQ_SWEEP_WAIT_SECONDS: String(values.dlqSweepWaitSeconds) }
      : {}),
    ...(values.providerTableName !== undefined ? { PROVIDER_TABLE_NAME: values.providerTableName } : {}),
  };
}

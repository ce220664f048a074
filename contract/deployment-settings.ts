import {
  DEFAULT_MARKER_RETENTION_DAYS,
  MAX_MARKER_RETENTION_DAYS,
  type Retention,
  retentionOf,
  retentionRuleViolations,
} from './retention.js';
import { FIFO_MAX_BATCH_SIZE, isFifoMode, MODES, type Mode, type ModeSettings } from './topology.js';

/** Per-deployment knobs, set with CDK context (`-c crashRate=0.02`) and resolved in one place. */
export interface DeploymentSettings {
  /**
   * Probability that a handler kills itself at its mode's crash point.
   * @default 0 (deployed stacks never crash unless asked to)
   */
  readonly crashRate: number;
  /**
   * Seed of the deterministic crash decision.
   * @default 'seed'
   */
  readonly crashSeed: string;
  /**
   * Overrides every mode's batch size.
   * @default the topology's batch size per mode
   */
  readonly batchSize?: number;
  /**
   * Overrides every mode's maxReceiveCount (receives before the DLQ).
   * @default the topology's maxReceiveCount per mode
   */
  readonly maxReceiveCount?: number;
  /**
   * An email address subscribed to the alarm topic (every mode's DLQ alarm). SNS sends it a
   * confirmation mail first; nothing is delivered until someone confirms.
   * @default no subscription: subscribe the team's own endpoint to the `AlarmTopicArn` output
   */
  readonly alarmEmail?: string;
  /**
   * Days a dedupe record remembers an event (effectively-once's marker, powertools-idempotency's
   * record); the age guard refuses events older than that less its margin (contract/retention.ts).
   * @default 30
   */
  readonly markerRetentionDays?: number;
  /**
   * Probability, per request of a charge mode, that the stand-in payment provider executes the charge
   * and its response is lost (the consumer times out and retries).
   * @default 0
   */
  readonly providerLostResponseRate?: number;
}

export const DEFAULT_DEPLOYMENT: DeploymentSettings = { crashRate: 0, crashSeed: 'seed' };

/** The deployment's retention, refused (at synth) when it breaks the rule of contract/retention.ts. */
export function deploymentRetention(deployment: DeploymentSettings): Retention {
  const days = deployment.markerRetentionDays ?? DEFAULT_MARKER_RETENTION_DAYS;
  const retention = retentionOf(days * 24 * 3600);
  const violations = retentionRuleViolations(retention);
  if (violations.length > 0) {
    throw new InvalidSettingError(
      `context markerRetentionDays=${days} breaks the retention rule (docs/retention.md, "The rule"): ${violations.join('; ')}`,
    );
  }
  return retention;
}

export class InvalidSettingError extends Error {
  override readonly name = 'InvalidSettingError';
}

/** Reads settings from CDK context values (strings from `-c`, or JSON values from cdk.json). */
export function deploymentSettingsFromContext(get: (key: string) => unknown): DeploymentSettings {
  const crashRate = optionalNumber(get, 'crashRate');
  const crashSeed = get('crashSeed');
  const batchSize = optionalNumber(get, 'batchSize');
  const maxReceiveCount = optionalNumber(get, 'maxReceiveCount');
  const alarmEmail = optionalEmail(get, 'alarmEmail');
  const markerRetentionDays = optionalNumber(get, 'markerRetentionDays');
  const providerLostResponseRate = optionalNumber(get, 'providerLostResponseRate');
  if (
    providerLostResponseRate !== undefined &&
    !(providerLostResponseRate >= 0 && providerLostResponseRate <= 1)
  ) {
    throw new InvalidSettingError(
      `context providerLostResponseRate=${providerLostResponseRate} must be between 0 and 1 (e.g. -c providerLostResponseRate=0.05)`,
    );
  }
  if (
    markerRetentionDays !== undefined &&
    !(
      Number.isInteger(markerRetentionDays) &&
      markerRetentionDays >= 1 &&
      markerRetentionDays <= MAX_MARKER_RETENTION_DAYS
    )
  ) {
    throw new InvalidSettingError(
      `context markerRetentionDays=${markerRetentionDays} must be a whole number of days from 1 to ` +
        `${MAX_MARKER_RETENTION_DAYS} (the run's manifest is kept that long)`,
    );
  }
  if (crashRate !== undefined && !(crashRate >= 0 && crashRate <= 1)) {
    throw new InvalidSettingError(
      `context crashRate=${crashRate} must be between 0 and 1 (e.g. -c crashRate=0.02)`,
    );
  }
  if (crashSeed !== undefined && (typeof crashSeed !== 'string' || crashSeed.trim() === '')) {
    throw new InvalidSettingError('context crashSeed must be a non-empty string (e.g. -c crashSeed=demo)');
  }
  if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 10_000)) {
    throw new InvalidSettingError(`context batchSize=${batchSize} must be an integer from 1 to 10000`);
  }
  if (
    maxReceiveCount !== undefined &&
    !(Number.isInteger(maxReceiveCount) && maxReceiveCount >= 1 && maxReceiveCount <= 1000)
  ) {
    throw new InvalidSettingError(
      `context maxReceiveCount=${maxReceiveCount} must be an integer from 1 to 1000`,
    );
  }
  return {
    crashRate: crashRate ?? DEFAULT_DEPLOYMENT.crashRate,
    crashSeed: typeof crashSeed === 'string' ? crashSeed : DEFAULT_DEPLOYMENT.crashSeed,
    ...(batchSize !== undefined ? { batchSize } : {}),
    ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
    ...(alarmEmail !== undefined ? { alarmEmail } : {}),
    ...(markerRetentionDays !== undefined ? { markerRetentionDays } : {}),
    ...(providerLostResponseRate !== undefined ? { providerLostResponseRate } : {}),
  };
}

/**
 * A plain `local@domain.tld` address, as SNS's email protocol takes it: no display name, no spaces,
 * one `@`, a dot in the domain, at most 254 characters (RFC 5321's path limit). A typo caught here
 * stops the synth; caught by SNS it would be a subscription nobody ever confirms, and an alarm that
 * reaches no one.
 */
const EMAIL = /^[^\s@<>(),;:"[\]]+@[^\s@<>(),;:"[\]]+\.[^\s@<>(),;:"[\].]+$/;

function optionalEmail(get: (key: string) => unknown, key: string): string | undefined {
  const raw = get(key);
  if (raw === undefined) return undefined;
  const value = typeof raw === 'string' ? raw.trim() : raw;
  if (typeof value !== 'string' || value.length > 254 || !EMAIL.test(value)) {
    throw new InvalidSettingError(
      `context ${key}=${JSON.stringify(raw)} is not an email address ` +
        `(e.g. -c ${key}=oncall@example.com; leave it out to subscribe later)`,
    );
  }
  return value;
}

function optionalNumber(get: (key: string) => unknown, key: string): number | undefined {
  const raw = get(key);
  if (raw === undefined) return undefined;
  const value = typeof raw === 'number' ? raw : Number(raw);
  if (typeof raw !== 'number' && typeof raw !== 'string') {
    throw new InvalidSettingError(`context ${key} must be a number, got ${JSON.stringify(raw)}`);
  }
  if (Number.isNaN(value) || (typeof raw === 'string' && raw.trim() === '')) {
    throw new InvalidSettingError(`context ${key}=${String(raw)} is not a number`);
  }
  return value;
}

/** A mode's topology settings with the deployment's overrides applied, checked against AWS's rules. */
export function resolveModeSettings(mode: Mode, deployment: DeploymentSettings): ModeSettings {
  const base: ModeSettings = MODES[mode];
  const fifo = isFifoMode(mode);
  // A FIFO source takes at most 10 records per batch and no batching window: a larger override is
  // clamped for FIFO modes (fifoBatchSizeNote says so where it was asked for).
  const batchSize = fifo
    ? Math.min(FIFO_MAX_BATCH_SIZE, deployment.batchSize ?? base.batchSize)
    : (deployment.batchSize ?? base.batchSize);
  const settings: ModeSettings = {
    ...base,
    batchSize,
    maxReceiveCount: deployment.maxReceiveCount ?? base.maxReceiveCount,
    // AWS requires a batching window for batches larger than 10, and refuses one on FIFO.
    maxBatchingWindowSeconds: fifo
      ? 0
      : batchSize > 10
        ? Math.max(1, base.maxBatchingWindowSeconds)
        : base.maxBatchingWindowSeconds,
  };
  if (settings.visibilityTimeoutSeconds < 6 * settings.functionTimeoutSeconds) {
    throw new InvalidSettingError(
      `${mode}: visibility timeout ${settings.visibilityTimeoutSeconds}s must be ≥ 6 × function timeout ` +
        `(${settings.functionTimeoutSeconds}s), as AWS recommends for SQS event sources`,
    );
  }
  if (settings.maxConcurrency < 2 || settings.maxConcurrency > 1000) {
    throw new InvalidSettingError(
      `${mode}: maxConcurrency ${settings.maxConcurrency} must be from 2 to 1000`,
    );
  }
  return settings;
}

/**
 * The warning for a batch size above what FIFO allows, naming the FIFO modes it was clamped for;
 * undefined when nothing was clamped.
 */
export function fifoBatchSizeNote(modes: readonly Mode[], batchSize: number | undefined): string | undefined {
  const clamped = modes.filter(isFifoMode);
  if (batchSize === undefined || batchSize <= FIFO_MAX_BATCH_SIZE || clamped.length === 0) return undefined;
  return (
    `batch size ${batchSize} applies to ${clamped.join(', ')} as ${FIFO_MAX_BATCH_SIZE} with no batching window: ` +
    `Lambda takes at most ${FIFO_MAX_BATCH_SIZE} records per batch from a FIFO queue`
  );
}

import {
  DEFAULT_MARKER_RETENTION_DAYS,
  MAX_MARKER_RETENTION_DAYS,
  type Retention,
  retentionOf,
  retentionRuleViolations,
} from './retention.js';
import {
  chargeOf,
  DEFAULT_MODES,
  FIFO_MAX_BATCH_SIZE,
  isFifoMode,
  isMode,
  MODE_NAMES,
  MODES,
  type Mode,
  type ModeSettings,
} from './topology.js';

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
   * Overrides every consumer's function timeout; each queue's visibility timeout follows at 6× it,
   * as AWS recommends. Short values make a crashed batch come back in seconds: how the local run of
   * the synthesized assembly stays quick (docs/deploying.md, "Before you deploy: run the assembly").
   * @default the topology's (30 s, visibility 180 s)
   */
  readonly functionTimeoutSeconds?: number;
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
  /**
   * The modes deployed (`-c modes=at-least-once,effectively-once`, or `-c modes=all`), in topology
   * order. The payment provider comes with a charge mode only.
   * @default the default run's modes (DEFAULT_MODES)
   */
  readonly modes?: readonly Mode[];
  /**
   * Deploys the producing side's outbox and its relay (`-c outboxRelay=true`). No deployed run
   * drives a producer, so it is asked for, or comes with `-c modes=all`.
   * @default false, true when every mode is deployed (modes=all)
   */
  readonly outboxRelay?: boolean;
  /**
   * Provisioned mode on every consumer's event source mapping (`-c provisionedPollers=2:10`): it
   * replaces maximum concurrency, which AWS does not allow beside it. aws-cdk-lib checks the ranges
   * at synth (SQS: minimum 2–200, maximum 2–2,000, minimum ≤ maximum).
   * @default none: on-demand polling, bounded by each mode's maxConcurrency
   */
  readonly provisionedPollers?: PollerRange;
}

/** Provisioned mode's pollers for an event source mapping. */
export interface PollerRange {
  readonly minimumPollers: number;
  readonly maximumPollers: number;
}

/** What aws-cdk-lib 2.276.0 accepts for an SQS mapping, for the messages that refuse a setting. */
export const SQS_POLLER_RANGES = 'SQS allows a minimum of 2–200 and a maximum of 2–2,000, minimum ≤ maximum';

/** The modes a deployment deploys, in topology order. */
export function deployedModes(deployment: DeploymentSettings): readonly Mode[] {
  const modes = deployment.modes ?? DEFAULT_MODES;
  return MODE_NAMES.filter((mode) => modes.includes(mode));
}

/** Whether the deployment includes the outbox relay. */
export function deploysOutboxRelay(deployment: DeploymentSettings): boolean {
  // Every mode (`-c modes=all`, or the list in code) brings the relay unless it is turned off.
  return deployment.outboxRelay ?? MODE_NAMES.every((mode) => deployedModes(deployment).includes(mode));
}

/** Whether the deployment includes the stand-in payment provider: a charge mode needs it. */
export function deploysPaymentProvider(deployment: DeploymentSettings): boolean {
  return deployedModes(deployment).some((mode) => chargeOf(mode) !== undefined);
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
  const functionTimeoutSeconds = optionalNumber(get, 'functionTimeoutSeconds');
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
  const modes = optionalModes(get);
  if (
    functionTimeoutSeconds !== undefined &&
    (!Number.isInteger(functionTimeoutSeconds) || functionTimeoutSeconds < 1 || functionTimeoutSeconds > 150)
  ) {
    // 150 s × 6 = 900 s; SQS allows a visibility timeout of at most 12 hours, Lambda a timeout of 900 s.
    throw new InvalidSettingError(
      `context functionTimeoutSeconds=${functionTimeoutSeconds} must be a whole number of seconds from 1 to 150 (the visibility timeout is 6× it)`,
    );
  }
  const outboxRelay = optionalBoolean(get, 'outboxRelay');
  const provisionedPollers = optionalPollers(get);
  return {
    ...(modes !== undefined ? { modes } : {}),
    ...(outboxRelay !== undefined ? { outboxRelay } : {}),
    ...(provisionedPollers !== undefined ? { provisionedPollers } : {}),
    crashRate: crashRate ?? DEFAULT_DEPLOYMENT.crashRate,
    crashSeed: typeof crashSeed === 'string' ? crashSeed : DEFAULT_DEPLOYMENT.crashSeed,
    ...(batchSize !== undefined ? { batchSize } : {}),
    ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
    ...(functionTimeoutSeconds !== undefined ? { functionTimeoutSeconds } : {}),
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

/** `-c modes=a,b` or `-c modes=all` (a JSON array in cdk.json works too). */
function optionalModes(get: (key: string) => unknown): readonly Mode[] | undefined {
  const raw = get('modes');
  if (raw === undefined) return undefined;
  if (raw === 'all') return MODE_NAMES;
  const names = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined;
  const modes = names?.map((name) => String(name).trim()).filter((name) => name !== '');
  if (modes === undefined || modes.length === 0) {
    throw new InvalidSettingError(
      `context modes=${JSON.stringify(raw)} must name modes, comma-separated, or be all ` +
        `(e.g. -c modes=at-least-once,effectively-once; the modes: ${MODE_NAMES.join(', ')})`,
    );
  }
  const unknown = modes.filter((name) => !isMode(name));
  if (unknown.length > 0) {
    throw new InvalidSettingError(
      `context modes names ${unknown.join(', ')}, which the topology lacks (the modes: ${MODE_NAMES.join(', ')}; or -c modes=all)`,
    );
  }
  return MODE_NAMES.filter((mode) => modes.includes(mode));
}

function optionalBoolean(get: (key: string) => unknown, key: string): boolean | undefined {
  const raw = get(key);
  if (raw === undefined) return undefined;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new InvalidSettingError(
    `context ${key}=${JSON.stringify(raw)} must be true or false (e.g. -c ${key}=true)`,
  );
}

/** `-c provisionedPollers=MIN:MAX`: whole numbers; their ranges are aws-cdk-lib's to check. */
function optionalPollers(get: (key: string) => unknown): PollerRange | undefined {
  const raw = get('provisionedPollers');
  if (raw === undefined) return undefined;
  const match = typeof raw === 'string' ? /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec(raw) : null;
  if (!match) {
    throw new InvalidSettingError(
      `context provisionedPollers=${JSON.stringify(raw)} must be MIN:MAX, two whole numbers of pollers ` +
        `(e.g. -c provisionedPollers=2:10; ${SQS_POLLER_RANGES})`,
    );
  }
  return { minimumPollers: Number(match[1]), maximumPollers: Number(match[2]) };
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
    ...(deployment.functionTimeoutSeconds !== undefined
      ? {
          functionTimeoutSeconds: deployment.functionTimeoutSeconds,
          visibilityTimeoutSeconds: 6 * deployment.functionTimeoutSeconds,
        }
      : {}),
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

/** The settings a mode actually runs with in an environment (after local or deployed overrides). */
export interface EffectiveModeSettings {
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** The most batches in flight at once: maximum concurrency, or 10 per provisioned poller. */
  readonly maxConcurrency: number;
  /** A deployed mapping's provisioned pollers (`-c provisionedPollers`), which replace maximum concurrency. */
  readonly provisionedPollers?: PollerRange;
  readonly visibilityTimeoutSeconds: number;
  readonly functionTimeoutSeconds: number;
  readonly maxReceiveCount: number;
}

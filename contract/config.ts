import { ConfigError } from './errors.js';
import { MIN_MARKER_TTL_SECONDS, type Retention, retentionOf } from './retention.js';
import type { Mode } from './topology.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Reads a required environment variable; a missing or empty one is a deploy bug, so throw. */
export function requireEnv(name: string, env: Env = process.env): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    throw new ConfigError(`environment variable ${name} is required but not set`);
  }
  return value;
}

/** A probability in [0, 1], e.g. CRASH_RATE. */
export function requireRate(name: string, env: Env = process.env): number {
  const raw = requireEnv(name, env);
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new ConfigError(`${name}=${raw} must be a number between 0 and 1`);
  }
  return value;
}

/** Configuration every consumer handler needs. */
export interface ConsumerConfig {
  readonly mode: Mode;
  readonly tableName: string;
  /** CRASH_RATE, CRASH_SEED, CRASH_AT: the lab's only; unset (a team's deployment) is no crash. */
  readonly crashRate: number;
  readonly crashSeed: string;
  /** Deliveries that always crash (`<eventId>@<receiveCount>`); CRASH_AT=none or unset for none. */
  readonly crashAt: ReadonlySet<string>;
  /** The dedupe records' TTL and the age guard's limit, from MARKER_TTL_SECONDS. */
  readonly retention: Retention;
  /** AGE_GUARD=on|off: whether a consumer that dedupes refuses an event older than its records remember. */
  readonly ageGuard: boolean;
}

/** The mode is the handler's own (one handler file per mode), not configuration. */
export function readConsumerConfig(mode: Mode, env: Env = process.env): ConsumerConfig {
  return {
    mode,
    tableName: requireEnv('TABLE_NAME', env),
    crashRate: isSet('CRASH_RATE', env) ? requireRate('CRASH_RATE', env) : 0,
    crashSeed: isSet('CRASH_SEED', env) ? requireEnv('CRASH_SEED', env) : 'none',
    crashAt: isSet('CRASH_AT', env) ? requireCrashTargets('CRASH_AT', env) : new Set(),
    retention: retentionOf(requireWholeSeconds('MARKER_TTL_SECONDS', env, MIN_MARKER_TTL_SECONDS)),
    ageGuard: requireSwitch('AGE_GUARD', env),
  };
}

const isSet = (name: string, env: Env): boolean => (env[name] ?? '').trim() !== '';

/** A whole number of seconds, at least `min`, e.g. MARKER_TTL_SECONDS. */
export function requireWholeSeconds(name: string, env: Env = process.env, min = 0): number {
  const raw = requireEnv(name, env);
  const value = Number(raw);
  if (!/^[0-9]+$/.test(raw.trim()) || value < min) {
    throw new ConfigError(`${name}=${raw} must be a whole number of seconds, at least ${min}`);
  }
  return value;
}

/** `on` or `off`. */
export function requireSwitch(name: string, env: Env = process.env): boolean {
  const raw = requireEnv(name, env).trim();
  if (raw !== 'on' && raw !== 'off') throw new ConfigError(`${name}=${raw} must be on or off`);
  return raw === 'on';
}

/** `none`, or a comma-separated list of `<eventId>@<receiveCount>` (receive count ≥ 1). */
export function requireCrashTargets(name: string, env: Env = process.env): ReadonlySet<string> {
  const raw = requireEnv(name, env).trim();
  if (raw === 'none') return new Set();
  const targets = raw.split(',').map((target) => target.trim());
  const invalid = targets.filter((target) => !/^[A-Za-z0-9._:-]{1,128}@[1-9][0-9]*$/.test(target));
  if (invalid.length > 0) {
    throw new ConfigError(
      `${name} must be "none" or <eventId>@<receiveCount>[,…]; invalid: ${invalid.join(', ')}`,
    );
  }
  return new Set(targets);
}

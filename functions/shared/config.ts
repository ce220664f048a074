import type { Mode } from '../../lib/topology.js';
import { ConfigError } from './errors.js';

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
  readonly crashRate: number;
  readonly crashSeed: string;
}

/** The mode is the handler's own (one handler file per mode), not configuration. */
export function readConsumerConfig(mode: Mode, env: Env = process.env): ConsumerConfig {
  return {
    mode,
    tableName: requireEnv('TABLE_NAME', env),
    crashRate: requireRate('CRASH_RATE', env),
    crashSeed: requireEnv('CRASH_SEED', env),
  };
}

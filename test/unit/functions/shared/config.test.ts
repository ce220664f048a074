import { describe, expect, it } from 'vitest';
import { readConsumerConfig, requireEnv } from '../../../../functions/shared/config.js';
import { ConfigError } from '../../../../functions/shared/errors.js';

describe('configuration', () => {
  const env = { TABLE_NAME: 't', CRASH_RATE: '0.1', CRASH_SEED: 's' };

  it('reads a complete consumer configuration', () => {
    expect(readConsumerConfig('at-least-once', env)).toEqual({
      mode: 'at-least-once',
      tableName: 't',
      crashRate: 0.1,
      crashSeed: 's',
    });
  });

  it('fails fast, naming the variable, when one is missing or blank', () => {
    expect(() => requireEnv('TABLE_NAME', {})).toThrow(
      new ConfigError('environment variable TABLE_NAME is required but not set'),
    );
    expect(() => readConsumerConfig('at-least-once', { ...env, CRASH_SEED: ' ' })).toThrow(/CRASH_SEED/);
  });

  it.each(['-0.1', '1.5', 'often'])('rejects CRASH_RATE=%s', (rate) => {
    expect(() => readConsumerConfig('at-least-once', { ...env, CRASH_RATE: rate })).toThrow(ConfigError);
  });
});

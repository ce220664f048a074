import { describe, expect, it } from 'vitest';
import { readConsumerConfig, requireEnv } from '../../../contract/config.js';
import { ConfigError } from '../../../contract/errors.js';
import { retentionOf } from '../../../contract/retention.js';

describe('configuration', () => {
  const env = {
    TABLE_NAME: 't',
    CRASH_RATE: '0.1',
    CRASH_SEED: 's',
    CRASH_AT: 'none',
    MARKER_TTL_SECONDS: '60',
    AGE_GUARD: 'on',
  };

  it('reads a complete consumer configuration', () => {
    expect(readConsumerConfig('at-least-once', env)).toEqual({
      mode: 'at-least-once',
      tableName: 't',
      crashRate: 0.1,
      crashSeed: 's',
      crashAt: new Set(),
      retention: retentionOf(60),
      ageGuard: true,
    });
    expect(readConsumerConfig('at-least-once', { ...env, AGE_GUARD: 'off' }).ageGuard).toBe(false);
    expect(readConsumerConfig('at-least-once', { ...env, CRASH_AT: 'evt-1@1, evt-2@3' }).crashAt).toEqual(
      new Set(['evt-1@1', 'evt-2@3']),
    );
  });

  it.each(['evt-1', 'evt-1@0', 'a#b@1', 'evt-1@1,'])('rejects CRASH_AT=%j', (crashAt) => {
    expect(() => readConsumerConfig('at-least-once', { ...env, CRASH_AT: crashAt })).toThrow(/CRASH_AT/);
  });

  it('fails fast, naming the variable, when one is missing or blank', () => {
    expect(() => requireEnv('TABLE_NAME', {})).toThrow(
      new ConfigError('environment variable TABLE_NAME is required but not set'),
    );
    expect(() => readConsumerConfig('at-least-once', { ...env, MARKER_TTL_SECONDS: ' ' })).toThrow(
      /MARKER_TTL_SECONDS/,
    );
  });

  it('runs with no crash settings at all, as a team deploys it: no crash', () => {
    const { CRASH_RATE, CRASH_SEED, CRASH_AT, ...deployed } = env;
    expect(readConsumerConfig('at-least-once', deployed)).toMatchObject({ crashRate: 0, crashAt: new Set() });
    expect(readConsumerConfig('at-least-once', { ...deployed, CRASH_AT: ' ' }).crashAt).toEqual(new Set());
  });

  it.each(['-0.1', '1.5', 'often'])('rejects CRASH_RATE=%s', (rate) => {
    expect(() => readConsumerConfig('at-least-once', { ...env, CRASH_RATE: rate })).toThrow(ConfigError);
  });

  it.each([
    ['MARKER_TTL_SECONDS', '0'],
    ['MARKER_TTL_SECONDS', '1.5'],
    ['MARKER_TTL_SECONDS', 'a day'],
    ['AGE_GUARD', 'yes'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => readConsumerConfig('at-least-once', { ...env, [name]: value })).toThrow(new RegExp(name));
  });
});

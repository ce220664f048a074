import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DEPLOYMENT,
  type DeploymentSettings,
  deploymentSettingsFromContext,
  deploysOutboxRelay,
  fifoBatchSizeNote,
  resolveModeSettings,
} from '../../../contract/deployment-settings.js';
import {
  FIFO_MAX_BATCH_SIZE,
  isFifoMode,
  MODE_NAMES,
  MODES,
  queueNames,
  settingsOf,
} from '../../../contract/topology.js';

const deployment = (overrides: Partial<DeploymentSettings>): DeploymentSettings => ({
  ...DEFAULT_DEPLOYMENT,
  ...overrides,
});

describe('the FIFO mode in the topology', () => {
  it('marks fifo-versioned, and only the modes whose queue is fifo, as FIFO', () => {
    expect(isFifoMode('fifo-versioned')).toBe(true);
    expect(isFifoMode('at-least-once')).toBe(false);
    expect(isFifoMode('effectively-once')).toBe(false);
    for (const mode of MODE_NAMES) expect(isFifoMode(mode), mode).toBe(settingsOf(mode).queue === 'fifo');
    expect(FIFO_MAX_BATCH_SIZE).toBe(10);
  });

  it('names a FIFO mode’s queue and DLQ with the .fifo suffix, and a standard mode’s without', () => {
    expect(queueNames('fifo-versioned')).toEqual({
      queue: 'fifo-versioned.fifo',
      deadLetterQueue: 'fifo-versioned-dlq.fifo',
    });
    expect(queueNames('at-least-once')).toEqual({
      queue: 'at-least-once',
      deadLetterQueue: 'at-least-once-dlq',
    });
    // SQS: up to 80 characters, alphanumerics, hyphens and underscores, `.fifo` for a FIFO queue.
    for (const mode of MODE_NAMES) {
      for (const name of Object.values(queueNames(mode))) {
        expect(name.length, name).toBeLessThanOrEqual(80);
        expect(name, name).toMatch(isFifoMode(mode) ? /^[\w-]+\.fifo$/ : /^[\w-]+$/);
      }
    }
  });
});

describe('resolveModeSettings', () => {
  it('clamps a FIFO mode’s batch size to 10 and gives it no batching window, whatever the override', () => {
    for (const batchSize of [11, 50, 100, 10_000]) {
      expect(resolveModeSettings('fifo-versioned', deployment({ batchSize }))).toMatchObject({
        batchSize: FIFO_MAX_BATCH_SIZE,
        maxBatchingWindowSeconds: 0,
      });
    }
  });

  it('keeps a FIFO mode’s batch size at or under 10 as given, and its topology default without one', () => {
    expect(resolveModeSettings('fifo-versioned', deployment({ batchSize: 1 })).batchSize).toBe(1);
    expect(resolveModeSettings('fifo-versioned', deployment({ batchSize: 10 })).batchSize).toBe(10);
    const base = resolveModeSettings('fifo-versioned', DEFAULT_DEPLOYMENT);
    expect(base.batchSize).toBe(Math.min(MODES['fifo-versioned'].batchSize, FIFO_MAX_BATCH_SIZE));
    expect(base.maxBatchingWindowSeconds).toBe(0);
  });

  it('gives a standard mode the override and the batching window AWS requires above 10', () => {
    expect(resolveModeSettings('at-least-once', deployment({ batchSize: 100 }))).toMatchObject({
      batchSize: 100,
      maxBatchingWindowSeconds: 1,
    });
    expect(resolveModeSettings('at-least-once', deployment({ batchSize: 10 }))).toMatchObject({
      batchSize: 10,
      maxBatchingWindowSeconds: MODES['at-least-once'].maxBatchingWindowSeconds,
    });
  });

  it('applies the other overrides to a FIFO mode as to any other', () => {
    expect(
      resolveModeSettings('fifo-versioned', deployment({ batchSize: 100, maxReceiveCount: 3 })),
    ).toMatchObject({ batchSize: 10, maxReceiveCount: 3, queue: 'fifo' });
  });

  it('never resolves a FIFO mode to settings the FIFO event source would refuse', () => {
    for (const mode of MODE_NAMES.filter(isFifoMode)) {
      for (const batchSize of [undefined, 1, 10, 11, 100]) {
        const settings = resolveModeSettings(mode, deployment(batchSize === undefined ? {} : { batchSize }));
        expect(settings.batchSize, `${mode} ${batchSize}`).toBeLessThanOrEqual(FIFO_MAX_BATCH_SIZE);
        expect(settings.maxBatchingWindowSeconds, `${mode} ${batchSize}`).toBe(0);
      }
    }
  });
});

describe('fifoBatchSizeNote', () => {
  it('names the FIFO modes a batch size above 10 was clamped for, and says why', () => {
    expect(fifoBatchSizeNote(['at-least-once', 'fifo-versioned'], 100)).toBe(
      'batch size 100 applies to fifo-versioned as 10 with no batching window: ' +
        'Lambda takes at most 10 records per batch from a FIFO queue',
    );
  });

  it('says nothing when nothing was clamped', () => {
    // No batch size asked for, one within the FIFO limit, or no FIFO mode in the run.
    expect(fifoBatchSizeNote(['fifo-versioned'], undefined)).toBeUndefined();
    expect(fifoBatchSizeNote(['fifo-versioned'], 10)).toBeUndefined();
    expect(fifoBatchSizeNote(['fifo-versioned'], 1)).toBeUndefined();
    expect(fifoBatchSizeNote(['at-least-once', 'effectively-once'], 100)).toBeUndefined();
    expect(fifoBatchSizeNote([], 100)).toBeUndefined();
  });

  it('is given for 11, the first size Lambda refuses on FIFO', () => {
    expect(fifoBatchSizeNote(['fifo-versioned'], 11)).toMatch(
      /^batch size 11 applies to fifo-versioned as 10/,
    );
  });
});

describe('deploysOutboxRelay', () => {
  it('deploys the relay when asked, or with every mode however the modes were given, unless turned off', () => {
    expect(deploysOutboxRelay(deployment({}))).toBe(false);
    expect(deploysOutboxRelay(deployment({ outboxRelay: true, modes: ['at-least-once'] }))).toBe(true);
    expect(deploysOutboxRelay(deployment({ modes: MODE_NAMES }))).toBe(true);
    expect(deploysOutboxRelay(deploymentSettingsFromContext((key) => ({ modes: 'all' })[key]))).toBe(true);
    expect(deploysOutboxRelay(deployment({ modes: MODE_NAMES, outboxRelay: false }))).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import type { EffectiveModeSettings } from '../../../../../contract/deployment-settings.js';
import { DEFAULT_MODES, MODE_NAMES, type Mode } from '../../../../../contract/topology.js';
import { outageWarning } from '../../../../../harness/local-aws/faults/outage.js';

/** Every mode at visibility 5 s, and the given max receive count. */
function settings(
  maxReceiveCount: number,
  overrides: Partial<Record<Mode, Partial<EffectiveModeSettings>>> = {},
): Record<Mode, EffectiveModeSettings> {
  return Object.fromEntries(
    MODE_NAMES.map((mode) => [
      mode,
      {
        batchSize: 10,
        maxBatchingWindowSeconds: 0,
        maxConcurrency: 2,
        visibilityTimeoutSeconds: 5,
        functionTimeoutSeconds: 3,
        maxReceiveCount,
        ...overrides[mode],
      },
    ]),
  ) as Record<Mode, EffectiveModeSettings>;
}

const outage = (forSeconds: number) => ({ outage: { afterSeconds: 2, forSeconds } });

describe('the warning about an outage too short to fill the DLQs', () => {
  it('says nothing without an outage, or when it outlasts visibility × max receive count', () => {
    expect(outageWarning({}, DEFAULT_MODES, settings(2))).toBeUndefined();
    expect(outageWarning(outage(11), DEFAULT_MODES, settings(2))).toBeUndefined();
  });

  it('warns at the topology’s max receive count, with the rule and what to change', () => {
    const warning = outageWarning(outage(30), DEFAULT_MODES, settings(10));
    expect(warning).toBe(
      'warning: the DynamoDB outage (--outage-for 30) is too short to fill the DLQs: a record that fails ' +
        'comes back only after the visibility timeout, so a message is dead-lettered only after failing for ' +
        'visibility 5 s × max receive count 10 = 50 s. The messages wait the outage out and are applied ' +
        'after it. Use --outage-for 51 or more, or a lower --max-receive-count or --visibility-timeout.',
    );
  });

  it('warns when the outage lasts exactly visibility × max receive count', () => {
    expect(outageWarning(outage(10), DEFAULT_MODES, settings(2))).toMatch(
      /= 10 s\..*--outage-for 11 or more/,
    );
  });

  it('names the modes whose settings differ, and asks for the longest outage they need', () => {
    const mixed = settings(2, { 'at-least-once': { visibilityTimeoutSeconds: 20 } });
    const warning = outageWarning(outage(30), DEFAULT_MODES, mixed);
    expect(warning).toContain('visibility 20 s × max receive count 2 = 40 s (at-least-once)');
    expect(warning).not.toContain('= 10 s');
    expect(warning).toContain('--outage-for 41 or more');
  });

  it('looks only at the modes that run', () => {
    const mixed = settings(2, { 'at-least-once': { maxReceiveCount: 10 } });
    expect(outageWarning(outage(30), ['effectively-once'], mixed)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { crashDraw, createCrashInjector, shouldCrash } from '../../../../functions/shared/crash.js';

describe('crash decision', () => {
  it('is deterministic for the same seed, event and receive count', () => {
    expect(crashDraw('s', 'evt-1', 1)).toBe(crashDraw('s', 'evt-1', 1));
  });

  it('draws afresh for a redelivery, another event or another seed', () => {
    const draws = new Set([
      crashDraw('s', 'evt-1', 1),
      crashDraw('s', 'evt-1', 2),
      crashDraw('s', 'evt-2', 1),
      crashDraw('t', 'evt-1', 1),
    ]);
    expect(draws.size).toBe(4);
  });

  it('crashes at about the configured rate and never at rate 0', () => {
    const ids = Array.from({ length: 10_000 }, (_, index) => `evt-${index}`);
    const crashes = ids.filter((id) => shouldCrash(0.05, 'seed', id, 1)).length;
    expect(crashes).toBeGreaterThan(400);
    expect(crashes).toBeLessThan(600);
    expect(ids.some((id) => shouldCrash(0, 'seed', id, 1))).toBe(false);
    expect(ids.every((id) => shouldCrash(1, 'seed', id, 1))).toBe(true);
  });

  it('records the crash before killing, and kills even when recording fails', async () => {
    const order: string[] = [];
    const injector = createCrashInjector({
      rate: 1,
      seed: 's',
      record: async () => {
        order.push('record');
        throw new Error('table unavailable');
      },
      kill: () => {
        order.push('kill');
        throw new Error('killed');
      },
    });

    await expect(
      injector.maybeCrash({ runId: 'r', key: 'e', receiveCount: 1, where: 'test' }),
    ).rejects.toThrow('killed');
    expect(order).toEqual(['record', 'kill']);
  });

  it('does nothing when the draw says no', async () => {
    let killed = false;
    const injector = createCrashInjector({
      rate: 0,
      seed: 's',
      record: async () => undefined,
      kill: () => {
        killed = true;
        throw new Error('killed');
      },
    });
    await injector.maybeCrash({ runId: 'r', key: 'e', receiveCount: 1, where: 'test' });
    expect(killed).toBe(false);
  });
});

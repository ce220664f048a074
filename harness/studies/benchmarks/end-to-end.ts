import type { Mode } from '../../../contract/topology.js';
import { newRunId, runExperiment } from '../../run/experiment.js';
import { benchConfig, floorTarget, startBenchEnvironment } from './environment.js';
import { measureFloor } from './floor.js';
import { type Spread, spread } from './spread.js';

export interface GridCell {
  readonly batchSize: number;
  readonly concurrency: number;
}

export interface CellModeResult {
  /** Messages/s end to end (first send until the mode's queue drained: the report's throughputPerSecond). */
  readonly endToEnd: Spread;
  /** Messages/s of the same handler code straight at DynamoDB Local (floor.ts). */
  readonly floor: Spread;
  /** Every run was exact: each message applied once, no drift (a benchmark of a wrong run is no benchmark). */
  readonly exact: boolean;
  readonly visibilityOverruns: number;
}

export interface CellResult extends GridCell {
  readonly batchingWindowSeconds: number;
  readonly messages: number;
  readonly repetitions: number;
  readonly modes: Partial<Record<Mode, CellModeResult>>;
}

/**
 * One grid cell: an environment at (batch size, concurrency), then for each repetition every mode
 * in turn — its floor, then its end-to-end run — so a mode's two numbers and the modes' numbers
 * are measured side by side, under the same background load.
 */
export async function runCell(
  cell: GridCell,
  options: {
    readonly modes: readonly Mode[];
    readonly messages: number;
    readonly repetitions: number;
    readonly log: (message: string) => void;
  },
): Promise<CellResult> {
  const env = await startBenchEnvironment({ ...cell, modes: options.modes, onStatus: options.log });
  const floors = new Map<Mode, number[]>();
  const ends = new Map<Mode, number[]>();
  const exact = new Map<Mode, boolean>();
  const overruns = new Map<Mode, number>();
  try {
    // Discarded: the first requests warm DynamoDB Local's JIT, and each mode's first run pays its
    // execution environments' cold starts; neither is what a sustained stream sees.
    for (const mode of options.modes) {
      const warmUp = Math.min(options.messages, 100);
      await measureFloor(floorTarget(env), {
        mode,
        messages: warmUp,
        batchSize: cell.batchSize,
        concurrency: cell.concurrency,
        accounts: 10,
      });
      await runExperiment(env, benchConfig(mode, warmUp, 'bench-warm-up'), newRunId('bench-warm-up'), {
        phase: () => undefined,
      });
    }
    options.log(`batch ${cell.batchSize}, concurrency ${cell.concurrency}: warmed up`);
    for (let repetition = 1; repetition <= options.repetitions; repetition += 1) {
      for (const mode of options.modes) {
        const tag = `batch ${cell.batchSize}, concurrency ${cell.concurrency}, ${mode}, run ${repetition}/${options.repetitions}`;
        const floor = await measureFloor(floorTarget(env), {
          mode,
          messages: options.messages,
          batchSize: cell.batchSize,
          concurrency: cell.concurrency,
          accounts: 10,
        });
        if (floor.failedRecords > 0)
          throw new Error(`floor of ${mode}: ${floor.failedRecords} records failed`);
        const seed = `bench-${cell.batchSize}-${cell.concurrency}-${repetition}`;
        const report = await runExperiment(env, benchConfig(mode, options.messages, seed), newRunId(seed), {
          phase: () => undefined,
        });
        const outcome = report.modes[mode];
        if (!outcome) throw new Error(`no outcome for ${mode}`);
        options.log(`${tag}: floor ${floor.perSecond}/s, end to end ${outcome.throughputPerSecond}/s`);
        (floors.get(mode) ?? floors.set(mode, []).get(mode))?.push(floor.perSecond);
        (ends.get(mode) ?? ends.set(mode, []).get(mode))?.push(outcome.throughputPerSecond);
        const ok =
          outcome.appliedOnce === options.messages &&
          outcome.duplicated === 0 &&
          outcome.lost === 0 &&
          outcome.driftCents === 0;
        exact.set(mode, (exact.get(mode) ?? true) && ok);
        // Summed over the repetitions: an overrun in any of them matters.
        overruns.set(mode, (overruns.get(mode) ?? 0) + (outcome.runtime?.visibilityOverruns ?? 0));
      }
    }
  } finally {
    await env.stop();
  }
  return {
    ...cell,
    batchingWindowSeconds:
      env.description.modes[options.modes[0] ?? 'effectively-once'].maxBatchingWindowSeconds,
    messages: options.messages,
    repetitions: options.repetitions,
    modes: Object.fromEntries(
      options.modes.map((mode) => [
        mode,
        {
          endToEnd: spread(ends.get(mode) ?? []),
          floor: spread(floors.get(mode) ?? []),
          exact: exact.get(mode) ?? false,
          visibilityOverruns: overruns.get(mode) ?? 0,
        },
      ]),
    ),
  };
}

import { DEFAULT_MODES } from '../../contract/topology.js';
import { type EmbeddedEnvironment, startEmbeddedEnvironment } from '../../harness/environments/embedded.js';
import {
  LOCAL_MAX_CONCURRENCY,
  localVisibilityTimeoutSeconds,
} from '../../harness/environments/local-timing.js';
import { type FaultSettings, NO_FAULTS } from '../../harness/local-aws/faults/faults.js';
import { DEFAULTS } from '../../harness/options/declaration.js';
import {
  type ExperimentConfig,
  type ExperimentProgress,
  type ExperimentReport,
  newRunId,
  runExperiment,
} from '../../harness/run/experiment.js';

export type RunOverrides = Partial<Omit<ExperimentConfig, 'faults'>> & {
  readonly faults?: Partial<FaultSettings>;
};

/**
 * An experiment config with the CLI's defaults (the visibility timeout sized for the batch size and
 * concurrency, as the CLI does), no crashes unless asked, and the given faults.
 */
export function experimentConfig(overrides: RunOverrides = {}): ExperimentConfig {
  const batchSize = overrides.batchSize ?? DEFAULTS.batchSize;
  return {
    messages: 100,
    accounts: 10,
    crashRate: 0,
    batchSize,
    seed: 'it',
    modes: DEFAULT_MODES,
    concurrency: undefined,
    visibilityTimeoutSeconds: localVisibilityTimeoutSeconds(
      batchSize,
      overrides.concurrency ?? LOCAL_MAX_CONCURRENCY,
      (overrides.modes ?? DEFAULT_MODES).length,
    ),
    ...overrides,
    faults: { ...NO_FAULTS, ...overrides.faults },
  };
}

/**
 * Runs one embedded experiment end to end (emulators, real handler processes, the verifier
 * bundle) and hands back the environment too, for independent reads; the caller stops it.
 */
export async function runEmbedded(
  cfg: ExperimentConfig,
  started: (env: EmbeddedEnvironment) => void = () => undefined,
  progress: ExperimentProgress = { phase: () => undefined },
): Promise<{ runId: string; report: ExperimentReport; env: EmbeddedEnvironment }> {
  const env = await startEmbeddedEnvironment({
    modes: cfg.modes,
    crashRate: cfg.crashRate,
    crashSeed: cfg.seed,
    ...(cfg.batchSize !== undefined ? { batchSize: cfg.batchSize } : {}),
    ...(cfg.concurrency !== undefined ? { concurrency: cfg.concurrency } : {}),
    ...(cfg.maxReceiveCount !== undefined ? { maxReceiveCount: cfg.maxReceiveCount } : {}),
    visibilityTimeoutSeconds: cfg.visibilityTimeoutSeconds,
    faults: cfg.faults,
    ...(cfg.markerTtlSeconds !== undefined ? { markerTtlSeconds: cfg.markerTtlSeconds } : {}),
    ...(cfg.ageGuard !== undefined ? { ageGuard: cfg.ageGuard } : {}),
  });
  started(env);
  const runId = newRunId(cfg.seed);
  const report = await runExperiment(env, cfg, runId, progress);
  return { runId, report, env };
}

export { replayCommand } from '../../harness/run/replay-command.js';

import { FIFO_MAX_BATCH_SIZE, isFifoMode, type Mode } from '../../contract/topology.js';
import { concurrencyText, type EnvironmentDescription } from '../environments/environment.js';
import type { RedeployChanges } from '../environments/redeploy-command.js';
import { UsageError } from '../options/usage-error.js';
import type { ExperimentConfig } from './experiment.js';

/**
 * The run's configuration as the environment will really execute it. On a deployed stack the crash
 * rate and batch size are fixed at deploy time: an explicit flag that contradicts them is refused
 * (a run that silently used other settings than asked would mislead), with how to redeploy
 * (`redeployCommand`: the deployed environment's, which keeps what the stack's outputs show).
 */
export function reconcileWithEnvironment(
  config: ExperimentConfig,
  explicit: ReadonlySet<string>,
  description: EnvironmentDescription,
  redeployCommand?: (changes: RedeployChanges) => string,
): ExperimentConfig {
  // A deployed redrive without --modes asks for every mode; the stack has its own (the run takes those).
  const deployedBatchSizes = [
    ...new Set(
      config.modes.flatMap((mode) => (description.modes[mode] ? [description.modes[mode].batchSize] : [])),
    ),
  ];
  // Without a deployed stack's command (nothing here refuses then), the context to change.
  const redeploy = (changes: RedeployChanges) =>
    redeployCommand
      ? `redeploy: ${redeployCommand(changes)}`
      : `redeploy with ${Object.entries(changes)
          .map(([key, value]) => `-c ${key}=${value}`)
          .join(' ')}`;

  if (explicit.has('crash-rate') && config.crashRate !== description.crashRate) {
    throw new UsageError(
      `the stack was deployed with crashRate=${description.crashRate}, but --crash-rate ${config.crashRate} was asked for. ` +
        `Drop --crash-rate, or ${redeploy({ crashRate: config.crashRate })}`,
    );
  }
  // A FIFO mode runs a batch size above 10 as 10 (contract/deployment-settings.ts): not a contradiction.
  const asDeployed = (mode: Mode, size: number) =>
    isFifoMode(mode) ? Math.min(FIFO_MAX_BATCH_SIZE, size) : size;
  const requested = config.batchSize;
  if (
    explicit.has('batch-size') &&
    requested !== undefined &&
    config.modes.some((mode) => description.modes[mode].batchSize !== asDeployed(mode, requested))
  ) {
    throw new UsageError(
      `the stack was deployed with batch size ${deployedBatchSizes.join('/')}, but --batch-size ${config.batchSize} was asked for. ` +
        `Drop --batch-size, or ${redeploy({ batchSize: requested })}`,
    );
  }
  return {
    ...config,
    crashRate: description.crashRate,
    batchSize: deployedBatchSizes.length === 1 ? deployedBatchSizes[0] : undefined,
  };
}

export function describeSettings(description: EnvironmentDescription, running?: readonly Mode[]): string {
  // Modes usually share their settings: print each distinct set once, for the modes that run.
  const groups = new Map<string, string[]>();
  const modes = Object.entries(description.modes).filter(
    ([mode]) => running === undefined || running.includes(mode as Mode),
  );
  for (const [mode, s] of modes) {
    const text =
      `batch ${s.batchSize}, concurrency ${concurrencyText(s)}, visibility ${s.visibilityTimeoutSeconds} s, ` +
      `timeout ${s.functionTimeoutSeconds} s, maxReceiveCount ${s.maxReceiveCount}`;
    groups.set(text, [...(groups.get(text) ?? []), mode]);
  }
  const settings =
    groups.size === 1
      ? `${modes.map(([mode]) => mode).join(', ')}: ${[...groups.keys()].join('')}`
      : [...groups].map(([text, names]) => `${names.join(', ')}: ${text}`).join('; ');
  return `${description.target}: crash rate ${description.crashRate}, crash seed ${description.crashSeed}; ${settings}`;
}

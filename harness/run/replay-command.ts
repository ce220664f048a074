import { MODE_NAMES } from '../../contract/topology.js';
import type { ExperimentConfig } from './experiment.js';

/**
 * The `npm run experiment` command that replays a run: its seed, sizes and faults. On a deployed
 * target the flags only the local runtime honours are left out (the deployment decides those).
 */
export function replayCommand(cfg: ExperimentConfig, target = 'embedded'): string {
  const local = target === 'embedded';
  const { faults } = cfg;
  const flags = [
    ...(local ? [] : [`--target ${target}`]),
    `--seed ${cfg.seed}`,
    `--messages ${cfg.messages}`,
    `--accounts ${cfg.accounts}`,
    `--crash-rate ${cfg.crashRate}`,
    ...(cfg.batchSize !== undefined ? [`--batch-size ${cfg.batchSize}`] : []),
    ...(cfg.modes.length < MODE_NAMES.length ? [`--modes ${cfg.modes.join(',')}`] : []),
    ...(faults.poisonRate ? [`--poison-rate ${faults.poisonRate}`] : []),
    ...(faults.producerDuplicateRate ? [`--producer-duplicate-rate ${faults.producerDuplicateRate}`] : []),
    ...(cfg.producer ? [`--producer ${cfg.producer}`] : []),
    ...(cfg.redrive
      ? [`--redrive${cfg.redrive.afterSeconds > 0 ? ` --redrive-after ${cfg.redrive.afterSeconds}` : ''}`]
      : []),
    ...(local
      ? [
          ...(cfg.concurrency !== undefined ? [`--concurrency ${cfg.concurrency}`] : []),
          ...(cfg.maxReceiveCount !== undefined ? [`--max-receive-count ${cfg.maxReceiveCount}`] : []),
          `--visibility-timeout ${cfg.visibilityTimeoutSeconds}`,
          ...(faults.redeliveryRate ? [`--redelivery-rate ${faults.redeliveryRate}`] : []),
          ...(faults.throttleRate ? [`--throttle-rate ${faults.throttleRate}`] : []),
          ...(faults.workDelayMs
            ? [`--work-delay ${faults.workDelayMs} --work-delay-rate ${faults.workDelayRate}`]
            : []),
          ...(faults.killRate ? [`--kill-rate ${faults.killRate}`] : []),
          ...(faults.outage
            ? [`--outage-after ${faults.outage.afterSeconds} --outage-for ${faults.outage.forSeconds}`]
            : []),
          ...(faults.providerLostResponseRate
            ? [`--provider-lost-response-rate ${faults.providerLostResponseRate}`]
            : []),
          ...(faults.producerCrashRate ? [`--producer-crash-rate ${faults.producerCrashRate}`] : []),
          ...(faults.relayCrashRate ? [`--relay-crash-rate ${faults.relayCrashRate}`] : []),
          ...(cfg.markerTtlSeconds !== undefined ? [`--marker-ttl ${cfg.markerTtlSeconds}`] : []),
          ...(cfg.ageGuard === false ? ['--no-age-guard'] : []),
        ]
      : []),
  ];
  return `npm run experiment -- ${flags.join(' ')}`;
}

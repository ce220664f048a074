import type { Mode } from '../../contract/topology.js';
import {
  MAX_DETAILED_EVENTS,
  type ManifestDetails,
  type ModeEventDetails,
} from '../../functions/shared/event-details.js';
import { writeManifestEvents, writeManifestSummary } from '../../functions/shared/manifest.js';
import type { ModeOutcome } from '../../functions/shared/outcome.js';
import type {
  EnvironmentDescription,
  ExperimentEnvironment,
  LiveModeStats,
} from '../environments/environment.js';
import type { FaultSettings } from '../faults/faults.js';
import { type DrainSnapshot, drainStallMs, waitUntilDrained } from './drain.js';
import { buildManifest, produce } from './producer.js';

export interface ExperimentConfig {
  readonly messages: number;
  readonly accounts: number;
  readonly crashRate: number;
  readonly batchSize: number | undefined;
  readonly seed: string;
  readonly modes: readonly Mode[];
  readonly concurrency: number | undefined;
  readonly visibilityTimeoutSeconds: number;
  /** Overrides every mode's maxReceiveCount (embedded). */
  readonly maxReceiveCount?: number | undefined;
  /** Faults injected besides the handlers' crash points; all zero by default. */
  readonly faults: FaultSettings;
}

export interface ModeReport extends ModeOutcome {
  /** Messages per second, from the first send until the mode's queue drained. */
  readonly throughputPerSecond: number;
  /** What the local runtime saw (embedded only). */
  readonly runtime?: LiveModeStats;
  /** Every event's outcome in this mode, aligned with the report's manifest (small runs only). */
  readonly events?: ModeEventDetails;
}

export interface ExperimentReport {
  readonly runId: string;
  readonly target: string;
  readonly config: ExperimentConfig & { readonly crashSeed: string };
  readonly environment: EnvironmentDescription;
  readonly modes: Partial<Record<Mode, ModeReport>>;
  readonly durationMs: number;
  /** Where the time went: starting the environment, producing, waiting for the drain, verifying. */
  readonly phasesMs: {
    readonly startup: number;
    readonly produce: number;
    readonly drain: number;
    readonly verify: number;
  };
  readonly memory: { readonly experimentPeakRssKb: number; readonly verifierPeakRssKb?: number };
  /** The produced events in production order, for the per-event detail of the modes (small runs only). */
  readonly manifest?: ManifestDetails;
  /** Why the report has no per-event detail (a run too large for one verifier response). */
  readonly eventsOmitted?: string;
}

export interface ExperimentProgress {
  phase(message: string): void;
  produced?(mode: Mode, sent: number, total: number): void;
  drain?(snapshot: DrainSnapshot): void;
}

export function newRunId(seed: string, now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const suffix = Math.random().toString(36).slice(2, 6);
  return `${stamp}-${seed.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, 40)}-${suffix}`;
}

/**
 * The experiment, independent of where it runs: produce the manifest to every mode's queue, wait
 * until the consumers have drained them, ask the verifier what happened.
 */
export async function runExperiment(
  env: ExperimentEnvironment,
  config: ExperimentConfig,
  runId: string,
  progress: ExperimentProgress,
  startedAt: number = Date.now(),
): Promise<ExperimentReport> {
  const manifest = buildManifest(runId, config.seed, config.messages, config.accounts, config.faults);
  const store = { ddb: env.ddb, tableName: env.tableName };

  progress.phase(`producing ${config.messages} messages to each of ${config.modes.join(', ')}`);
  const produceStart = Date.now();
  // The manifest is written before the first send, so nothing can be applied that it does not list.
  await writeManifestEvents(store, runId, manifest.events);
  await Promise.all(
    config.modes.map((mode) => {
      let sent = 0;
      return produce(env, mode, manifest, (count) => {
        sent += count;
        progress.produced?.(mode, sent, manifest.messages.length);
      });
    }),
  );
  await writeManifestSummary(store, runId, {
    produced: manifest.events.length,
    poison: manifest.poison,
    producerDuplicates: manifest.producerDuplicates,
    expectedCents: manifest.expectedCents,
    modes: config.modes,
  });
  const produceMs = Date.now() - produceStart;

  progress.phase('waiting until every queue is drained');
  const drainStart = Date.now();
  const drainedAfter = await waitUntilDrained(env, config.modes, {
    ...env.drainPolicy,
    // No limit on a drain that progresses, however long: give up only when nothing changes.
    stallMs: drainStallMs(
      Object.fromEntries(config.modes.map((mode) => [mode, env.description.modes[mode]])),
      config.faults.workDelayMs,
    ),
    onTick: (snapshot) => progress.drain?.(snapshot),
  });
  const drainMs = Date.now() - drainStart;

  progress.phase('verifying');
  const verifyStart = Date.now();
  const verification = await env.invokeVerifier(runId, config.modes, {
    events: config.messages <= MAX_DETAILED_EVENTS,
  });
  const verifyMs = Date.now() - verifyStart;

  const modes: Partial<Record<Mode, ModeReport>> = {};
  for (const mode of config.modes) {
    const outcome = verification.result.modes[mode];
    if (!outcome) throw new Error(`the verifier returned no outcome for ${mode}`);
    const seconds = (produceMs + (drainedAfter[mode] ?? drainMs)) / 1000;
    const runtime = env.liveStats?.(mode);
    modes[mode] = {
      ...outcome,
      throughputPerSecond: Math.round((config.messages / Math.max(seconds, 0.001)) * 10) / 10,
      ...(runtime !== undefined ? { runtime } : {}),
    };
  }
  return {
    runId,
    target: env.description.target,
    config: { ...config, crashSeed: env.description.crashSeed },
    environment: env.description,
    modes,
    durationMs: Date.now() - startedAt,
    phasesMs: { startup: produceStart - startedAt, produce: produceMs, drain: drainMs, verify: verifyMs },
    memory: {
      experimentPeakRssKb: process.resourceUsage().maxRSS,
      ...(verification.peakRssKb !== undefined ? { verifierPeakRssKb: verification.peakRssKb } : {}),
    },
    ...(verification.result.manifest ? { manifest: verification.result.manifest } : {}),
    ...(verification.result.eventsOmitted ? { eventsOmitted: verification.result.eventsOmitted } : {}),
  };
}

import type { Mode } from '../../contract/topology.js';
import {
  MAX_DETAILED_EVENTS,
  type ManifestDetails,
  type ModeEventDetails,
} from '../../verifier/event-details.js';
import type { Manifest } from '../../verifier/manifest.js';
import { writeManifestEvents, writeManifestSummary } from '../../verifier/manifest.js';
import type { ModeOutcome } from '../../verifier/outcome.js';
import type {
  EnvironmentDescription,
  ExperimentEnvironment,
  LiveModeStats,
} from '../environments/environment.js';
import type { FaultSettings } from '../local-aws/faults/faults.js';
import {
  type DrainRound,
  type DrainSnapshot,
  drainRoundsOf,
  drainStallMs,
  waitUntilDrained,
} from './drain.js';
import { type ProducerStats, produceThrough } from './outbox/produce-through.js';
import { buildManifest, produce } from './producer.js';
import { type DetailedOutcome, leadWithFinalState, type ModeRedrive } from './redrive.js';

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
  /** How long the dedupe records remember an event (embedded). @default the deployed default */
  readonly markerTtlSeconds?: number | undefined;
  /** Whether the consumers that dedupe refuse events older than their records remember. @default true */
  readonly ageGuard?: boolean | undefined;
  /**
   * After the first drain and verification, move every mode's DLQ back to its source queue, drain
   * and verify again (docs/redrive.md). Unset: no redrive.
   */
  readonly redrive?: { readonly afterSeconds: number } | undefined;
  /** How events reach the queues (`--producer`). @default the harness sends them (direct) */
  readonly producer?: 'outbox' | 'dual-write' | undefined;
}

export interface ModeReport extends ModeOutcome {
  /** Messages per second, from the first send until the mode's queue drained (the first drain). */
  readonly throughputPerSecond: number;
  /** What the local runtime saw (embedded only). */
  readonly runtime?: LiveModeStats;
  /** Every event's outcome in this mode, aligned with the report's manifest (small runs only). */
  readonly events?: ModeEventDetails;
  /**
   * With --redrive: what the redrive did, and the outcome of the first drain. The fields above are
   * the final state, after the redrive (docs/design.md, "A redrive run's report").
   */
  readonly redrive?: ModeRedrive;
  /**
   * `--producer dual-write`: events the producer committed and never sent (every message of the
   * event), and their valid amounts. Lost before any queue saw them: the producer's loss, not the
   * consumer's (the report does not mark them as a broken promise of the mode).
   */
  readonly neverSent?: { readonly events: number; readonly cents: number };
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
  /**
   * The drain's delivery rounds, every mode's together (local runtime only; absent in older
   * reports): per receive count, its records, its failed batches, and when its last batch was done.
   */
  readonly drainRounds?: readonly DrainRound[];
  readonly memory: { readonly experimentPeakRssKb: number; readonly verifierPeakRssKb?: number };
  /** The produced events in production order, for the per-event detail of the modes (small runs only). */
  readonly manifest?: ManifestDetails;
  /** How the producer published, when it was not the harness itself (`--producer`). */
  readonly producer?: ProducerStats;
  /** Why the report has no per-event detail (a run too large for one verifier response). */
  readonly eventsOmitted?: string;
  /** With --redrive: when it started and where its time went (each mode's counts are in modes). */
  readonly redrive?: {
    readonly afterSeconds: number;
    readonly phasesMs: {
      readonly wait: number;
      readonly move: number;
      readonly drain: number;
      readonly verify: number;
    };
  };
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
  // The outage window (--outage-after) is timed from the first send.
  env.onProduceStart?.();
  const firstSendAt = Date.now();
  const producer = await produceAll(env, config, manifest, progress);
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
  const drainedAfter = await drain(env, config, progress);
  const drainMs = Date.now() - drainStart;

  progress.phase('verifying');
  const verifyStart = Date.now();
  const verification = await env.invokeVerifier(runId, config.modes, {
    events: config.messages <= MAX_DETAILED_EVENTS,
  });
  const verifyMs = Date.now() - verifyStart;

  const rounds = drainRoundsOf(
    config.modes.map((mode) => env.liveStats?.(mode)),
    drainStart,
  );
  const modes: Partial<Record<Mode, ModeReport>> = {};
  for (const mode of config.modes) {
    const outcome = verification.result.modes[mode];
    if (!outcome) throw new Error(`the verifier returned no outcome for ${mode}`);
    const seconds = (produceMs + (drainedAfter[mode] ?? drainMs)) / 1000;
    const runtime = env.liveStats?.(mode);
    modes[mode] = {
      ...outcome,
      ...(producer ? { neverSent: neverSentEvents(manifest, producer.neverSent) } : {}),
      throughputPerSecond: Math.round((config.messages / Math.max(seconds, 0.001)) * 10) / 10,
      ...(runtime !== undefined ? { runtime } : {}),
    };
  }
  const redrive = config.redrive
    ? await redriveAndVerifyAgain(env, config, runId, progress, {
        afterSeconds: config.redrive.afterSeconds,
        firstDrainEndedAt: drainStart + drainMs,
        outageEndsAt: outageEndOf(config.faults, firstSendAt),
        modes,
      })
    : undefined;
  if (redrive) {
    // The runtime's counts at the end, the redrive's deliveries included, as the outcome now is;
    // the first drain's stay with its outcome (redrive.firstDrain.runtime).
    for (const mode of config.modes) {
      const report = modes[mode];
      const runtime = env.liveStats?.(mode);
      if (report && runtime) modes[mode] = { ...report, runtime };
    }
  }
  return {
    runId,
    target: env.description.target,
    config: { ...config, crashSeed: env.description.crashSeed },
    environment: env.description,
    modes,
    durationMs: Date.now() - startedAt,
    phasesMs: { startup: produceStart - startedAt, produce: produceMs, drain: drainMs, verify: verifyMs },
    ...(rounds.length > 0 ? { drainRounds: rounds } : {}),
    memory: {
      experimentPeakRssKb: process.resourceUsage().maxRSS,
      ...(verification.peakRssKb !== undefined ? { verifierPeakRssKb: verification.peakRssKb } : {}),
    },
    ...(verification.result.manifest ? { manifest: verification.result.manifest } : {}),
    ...(producer ? { producer } : {}),
    ...(verification.result.eventsOmitted ? { eventsOmitted: verification.result.eventsOmitted } : {}),
    ...(redrive ? { redrive: redrive.section } : {}),
  };
}

/**
 * The events a dual-writing producer committed and never sent, and their valid amounts. The
 * producer's `neverSent` already lists an event only if none of its messages went out (a re-sent
 * event may have lost one copy and still reached the queues).
 */
export function neverSentEvents(
  manifest: Pick<Manifest, 'events'>,
  neverSent: readonly string[],
): { readonly events: number; readonly cents: number } {
  const unsent = new Set(neverSent);
  let events = 0;
  let cents = 0;
  for (const event of manifest.events) {
    if (!unsent.has(event.eventId)) continue;
    events += 1;
    if (event.poison === undefined) cents += event.amountCents;
  }
  return { events, cents };
}

/**
 * Every mode's copy of the manifest to its queue: sent by the harness itself, or committed by a
 * producer service that publishes through a dual write or an outbox (harness/run/outbox).
 */
async function produceAll(
  env: ExperimentEnvironment,
  config: Pick<ExperimentConfig, 'modes' | 'producer' | 'seed' | 'faults'>,
  manifest: Manifest,
  progress: ExperimentProgress,
): Promise<ProducerStats | undefined> {
  const sent = new Map<Mode, number>();
  const onSent = (mode: Mode, count: number) => {
    const total = (sent.get(mode) ?? 0) + count;
    sent.set(mode, total);
    progress.produced?.(mode, total, manifest.messages.length);
  };
  if (config.producer) {
    return produceThrough(config.producer, env, config.modes, manifest, {
      seed: config.seed,
      producerCrashRate: config.faults.producerCrashRate ?? 0,
      relayCrashRate: config.faults.relayCrashRate ?? 0,
      onSent,
    });
  }
  await Promise.all(config.modes.map((mode) => produce(env, mode, manifest, (count) => onSent(mode, count))));
  return undefined;
}

/** Waits until every mode's queue is drained; no limit while it progresses, gives up when nothing changes. */
function drain(
  env: ExperimentEnvironment,
  config: Pick<ExperimentConfig, 'modes' | 'faults'>,
  progress: ExperimentProgress,
): Promise<Record<Mode, number>> {
  return waitUntilDrained(env, config.modes, {
    ...env.drainPolicy,
    stallMs: drainStallMs(
      Object.fromEntries(config.modes.map((mode) => [mode, env.description.modes[mode]])),
      config.faults.workDelayMs,
    ),
    onTick: (snapshot) => progress.drain?.(snapshot),
  });
}

/** When the outage window closes, in ms, if the run has one; the proxy's clock started no later. */
function outageEndOf(faults: FaultSettings, firstSendAt: number): number | undefined {
  const { outage } = faults;
  return outage ? firstSendAt + (outage.afterSeconds + outage.forSeconds) * 1000 : undefined;
}

/**
 * The redrive (docs/redrive.md): `afterSeconds` after the first drain ended, every mode's DLQ goes
 * back to its source queue, then the queues are drained and verified again. Each mode's report
 * becomes the state after it, with the redrive's counts and the first drain's outcome under
 * `redrive` (replaced in place in `modes`). A run with an outage
 * redrives only once it is over, as an operator redrives after the fix: the first drain can end
 * while it lasts (everything dead-lettered), and copies sent back into it would only be
 * dead-lettered again. `npm run redrive` runs it for a finished run (harness/run/redrive-run.ts).
 */
export async function redriveAndVerifyAgain<M extends DetailedOutcome & { readonly redrive?: ModeRedrive }>(
  env: ExperimentEnvironment,
  config: Pick<ExperimentConfig, 'modes' | 'faults'>,
  runId: string,
  progress: ExperimentProgress,
  input: {
    readonly afterSeconds: number;
    readonly firstDrainEndedAt: number;
    readonly outageEndsAt: number | undefined;
    /** Each mode after the first drain; replaced in place by the state after the redrive. */
    readonly modes: Partial<Record<Mode, M>>;
    /** Whether the verification after the redrive returns per-event detail. @default true */
    readonly events?: boolean;
  },
): Promise<{ section: NonNullable<ExperimentReport['redrive']> }> {
  const waitStart = Date.now();
  const asked = input.firstDrainEndedAt + input.afterSeconds * 1000;
  const redriveAt = Math.max(asked, input.outageEndsAt ?? asked);
  const waitMs = redriveAt - waitStart;
  if (waitMs > 0) {
    const why =
      redriveAt > asked ? 'until the DynamoDB outage is over' : `--redrive-after ${input.afterSeconds}`;
    progress.phase(`waiting ${Math.ceil(waitMs / 1000)} s before the redrive (${why})`);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  const moveStart = Date.now();
  const depths = await Promise.all(config.modes.map((mode) => env.deadLetterQueueDepth(mode)));
  const waiting = depths.map((depth) => depth.visible + depth.inFlight);
  const total = waiting.reduce((sum, count) => sum + count, 0);
  const nonEmpty = waiting.filter((count) => count > 0).length;
  progress.phase(
    `redriving ${total} messages from ${nonEmpty} DLQ${nonEmpty === 1 ? '' : 's'}` +
      (total > 0
        ? ` (${config.modes.map((mode, index) => `${mode} ${waiting[index]}`).join(', ')})`
        : ': nothing was dead-lettered'),
  );
  // One mode after the other: a deployed account allows only so many move tasks at once.
  const moved: Partial<Record<Mode, number>> = {};
  // An empty DLQ is not redriven: nothing to move, and no move task to start and wait for.
  for (const [index, mode] of config.modes.entries()) {
    moved[mode] = (waiting[index] ?? 0) > 0 ? await env.redrive(mode) : 0;
  }
  const moveMs = Date.now() - moveStart;

  progress.phase('waiting until every queue is drained again (after the redrive)');
  const drainStart = Date.now();
  await drain(env, config, progress);
  const drainMs = Date.now() - drainStart;

  progress.phase('verifying again (after the redrive)');
  const verifyStart = Date.now();
  // The verifier leaves the detail out for a run too large for one response (eventsOmitted).
  const verification = await env.invokeVerifier(runId, config.modes, { events: input.events ?? true });
  const verifyMs = Date.now() - verifyStart;

  for (const mode of config.modes) {
    const before = input.modes[mode];
    const after = verification.result.modes[mode];
    if (!before || !after) throw new Error(`the verifier returned no outcome for ${mode} after the redrive`);
    input.modes[mode] = leadWithFinalState(before, after, moved[mode] ?? 0);
  }
  return {
    section: {
      afterSeconds: input.afterSeconds,
      phasesMs: { wait: Math.max(0, waitMs), move: moveMs, drain: drainMs, verify: verifyMs },
    },
  };
}

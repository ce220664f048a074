/**
 * A run report with per-event detail, made without emulators: a small deterministic simulation of
 * each mode (batches, crashes drawn like the handlers draw them, redeliveries after the visibility
 * timeout, poison bodies), so its grids cluster like a real run's. test/fixtures/run-report-detailed.json
 * is `detailedReportFixture()` written out (`npx tsx test/support/run-report-fixture.ts`, which also
 * formats it as Biome checks it); the browser test falls back to it when a run's report has no
 * per-event detail.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MODE_NAMES, type Mode } from '../../contract/topology.js';
import { NO_FAULTS } from '../../harness/local-aws/faults/faults.js';
import type { DetailedReport, ModeReportWithDetails } from '../../harness/report/html/render.js';
import { crashDraw } from '../../modes/kit/crash.js';
import { EVENT_STATES, type ManifestDetails, type ModeEventDetails } from '../../verifier/event-details.js';

export interface FixtureOptions {
  readonly events?: number;
  readonly seed?: string;
  readonly crashRate?: number;
  readonly poisonRate?: number;
  readonly batchSize?: number;
  /** Leave the per-event detail out, as the verifier does above MAX_DETAILED_EVENTS. */
  readonly omitDetail?: boolean;
}

const BUCKET_MS = 500;
const VISIBILITY_MS = 10_000;
const PER_RECORD_MS = 90;
const LANES = 5;
const MAX_RECEIVES = 10;
const START_MS = Date.UTC(2026, 10, 30, 9, 0, 0);

interface Simulated {
  readonly applications: number[];
  readonly receives: number[][];
  readonly crashes: number[][];
  readonly deadLettered: boolean[];
  readonly deliveries: number;
  readonly suppressed: number;
  readonly appliedAt: number[];
  readonly crashedAt: number[];
}

/** One mode's consumer over the manifest: batches on LANES lanes, a crash redelivers its batch later. */
function simulate(
  mode: Mode,
  manifest: ManifestDetails,
  seed: string,
  rate: number,
  batchSize: number,
): Simulated {
  const n = manifest.eventIds.length;
  const s: Simulated = {
    applications: Array(n).fill(0),
    receives: Array.from({ length: n }, () => []),
    crashes: Array.from({ length: n }, () => []),
    deadLettered: Array(n).fill(false),
    deliveries: 0,
    suppressed: 0,
    appliedAt: [],
    crashedAt: [],
  };
  let deliveries = 0;
  let suppressed = 0;
  const completed = new Set<number>();
  const lanes = Array(LANES).fill(START_MS);
  const queue: { at: number; events: number[]; receive: number }[] = [];
  for (let start = 0; start < n; start += batchSize) {
    const events = Array.from({ length: Math.min(batchSize, n - start) }, (_, i) => start + i);
    queue.push({ at: START_MS + start * 5, events, receive: 1 });
  }
  while (queue.length > 0) {
    queue.sort((a, b) => a.at - b.at);
    const batch = queue.shift();
    if (!batch) break;
    const lane = lanes.indexOf(Math.min(...lanes));
    let clock = Math.max(lanes[lane] ?? START_MS, batch.at);
    deliveries += batch.events.length;
    let crashedAt = -1;
    const failed: number[] = [];
    for (const [position, event] of batch.events.entries()) {
      clock += PER_RECORD_MS;
      const id = manifest.eventIds[event] ?? '';
      const poison = manifest.poison[event] !== null;
      const crash = rate > 0 && crashDraw(seed, id, batch.receive) < rate;
      if (mode === 'at-most-once') {
        // Deleted with its batch before any work: a crash here loses this event and the rest of the batch.
        if (crash) {
          s.crashes[event]?.push(batch.receive);
          s.crashedAt.push(clock);
          crashedAt = position;
          break;
        }
        if (!poison) apply(s, event, batch.receive, clock);
        continue;
      }
      if (poison) {
        failed.push(event);
        continue;
      }
      const skip =
        (mode === 'effectively-once' && (s.applications[event] ?? 0) > 0) ||
        (mode === 'powertools-idempotency' && completed.has(event));
      if (skip) suppressed += 1;
      else apply(s, event, batch.receive, clock);
      if (crash) {
        s.crashes[event]?.push(batch.receive);
        s.crashedAt.push(clock);
        crashedAt = position;
        break;
      }
      completed.add(event);
    }
    lanes[lane] = clock;
    if (mode === 'at-most-once') continue;
    // A crash fails the whole batch; otherwise only the reported failures (poison) come back.
    const again = crashedAt >= 0 ? batch.events : failed;
    if (again.length === 0) continue;
    if (batch.receive >= MAX_RECEIVES) {
      for (const event of again) if ((s.applications[event] ?? 0) === 0) s.deadLettered[event] = true;
      continue;
    }
    queue.push({ at: clock + VISIBILITY_MS, events: again, receive: batch.receive + 1 });
  }
  return { ...s, deliveries, suppressed };
}

function apply(s: Simulated, event: number, receive: number, at: number): void {
  s.applications[event] = (s.applications[event] ?? 0) + 1;
  s.receives[event]?.push(receive);
  s.appliedAt.push(at);
}

function buckets(times: readonly number[], length: number): number[] {
  const counts = Array<number>(length).fill(0);
  for (const time of times) {
    const index = Math.floor((time - START_MS) / BUCKET_MS);
    counts[index] = (counts[index] ?? 0) + 1;
  }
  return counts;
}

function modeReport(manifest: ManifestDetails, sim: Simulated, omit: boolean): ModeReportWithDetails {
  let states = '';
  let appliedOnce = 0;
  let duplicated = 0;
  let extra = 0;
  let deadLettered = 0;
  let deadLetteredCents = 0;
  let lost = 0;
  let actualCents = 0;
  let expectedCents = 0;
  for (let i = 0; i < manifest.eventIds.length; i += 1) {
    const applications = sim.applications[i] ?? 0;
    const amount = manifest.amountCents[i] ?? 0;
    const poison = manifest.poison[i] !== null;
    if (!poison) expectedCents += amount;
    actualCents += amount * applications;
    if (poison) {
      if (sim.deadLettered[i]) {
        states += EVENT_STATES.poisonDeadLettered;
        deadLettered += 1;
      } else {
        states += EVENT_STATES.poisonLost;
        lost += 1;
      }
    } else if (applications === 1) {
      states += EVENT_STATES.appliedOnce;
      appliedOnce += 1;
    } else if (applications > 1) {
      states += EVENT_STATES.duplicated;
      duplicated += 1;
      extra += applications - 1;
    } else if (sim.deadLettered[i]) {
      states += EVENT_STATES.deadLettered;
      deadLettered += 1;
      deadLetteredCents += amount;
    } else {
      states += EVENT_STATES.lost;
      lost += 1;
    }
  }
  const last = Math.max(...sim.appliedAt, ...sim.crashedAt, START_MS);
  const length = Math.floor((last - START_MS) / BUCKET_MS) + 1;
  const crashes = sim.crashes.reduce((sum, list) => sum + list.length, 0);
  const events: ModeEventDetails = {
    states,
    applications: sim.applications,
    receiveCounts: sim.receives.map((list) => list.join(',')),
    crashes: sim.crashes.map((list) => list.join(',')),
    unexpectedEventIds: [],
    unattributedCrashes: 0,
    timeline: {
      startMs: START_MS,
      bucketMs: BUCKET_MS,
      applications: buckets(sim.appliedAt, length),
      crashes: buckets(sim.crashedAt, length),
    },
  };
  const poison = manifest.poison.filter((kind) => kind !== null).length;
  return {
    produced: manifest.eventIds.length,
    poison,
    producerDuplicates: 0,
    deliveries: sim.deliveries,
    appliedOnce,
    duplicated,
    extraApplications: extra,
    deadLettered,
    deadLetteredCents,
    lost,
    unexpected: 0,
    payloadMismatches: 0,
    conflictingReuse: 0,
    expectedCents,
    actualCents,
    driftCents: actualCents - expectedCents,
    ledgerCents: actualCents,
    consistent: true,
    crashes,
    suppressedDuplicates: sim.suppressed,
    retriedCancellations: 0,
    appliedAndDeadLettered: 0,
    deadLetteredUnreadable: 0,
    tooOldToDedupe: 0,
    orderViolations: 0,
    throughputPerSecond: Math.round((manifest.eventIds.length / ((last - START_MS) / 1000 + 1)) * 10) / 10,
    ...(omit
      ? {
          eventsOmitted: `${manifest.eventIds.length} events per mode is more than the 20,000 a report shows one by one`,
        }
      : { events }),
  };
}

export function detailedReportFixture(options: FixtureOptions = {}): DetailedReport {
  const n = options.events ?? 200;
  const seed = options.seed ?? 'html-fixture';
  const crashRate = options.crashRate ?? 0.03;
  const poisonRate = options.poisonRate ?? 0.02;
  const batchSize = options.batchSize ?? 10;
  const ids = Array.from({ length: n }, (_, i) => `evt-${String(i).padStart(6, '0')}`);
  const manifest: ManifestDetails = {
    eventIds: ids,
    accountIds: ids.map((id) => `acct-${Math.floor(crashDraw(seed, id, -1) * 10)}`),
    amountCents: ids.map((id) => 100 + Math.floor(crashDraw(seed, id, -2) * 9_900)),
    poison: ids.map((id) => (crashDraw(seed, id, -3) < poisonRate ? 'malformed-json' : null)),
  };
  const modes: Partial<Record<Mode, ModeReportWithDetails>> = {};
  for (const mode of MODE_NAMES) {
    modes[mode] = modeReport(
      manifest,
      simulate(mode, manifest, seed, crashRate, batchSize),
      options.omitDetail ?? false,
    );
  }
  const settings = {
    batchSize,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: LANES,
    visibilityTimeoutSeconds: VISIBILITY_MS / 1000,
    functionTimeoutSeconds: 8,
    maxReceiveCount: MAX_RECEIVES,
  };
  return {
    runId: `20261130T090000Z-${seed}-fx01`,
    target: 'embedded',
    config: {
      messages: n,
      accounts: 10,
      crashRate,
      batchSize,
      seed,
      modes: MODE_NAMES,
      concurrency: undefined,
      visibilityTimeoutSeconds: VISIBILITY_MS / 1000,
      faults: { ...NO_FAULTS, poisonRate },
      crashSeed: seed,
    },
    environment: {
      target: 'embedded',
      crashRate,
      crashSeed: seed,
      modes: Object.fromEntries(
        MODE_NAMES.map((mode) => [mode, settings]),
      ) as DetailedReport['environment']['modes'],
    },
    ...(options.omitDetail ? {} : { manifest }),
    modes,
    durationMs: 31_400,
    phasesMs: { startup: 2_800, produce: 900, drain: 26_100, verify: 1_600 },
    memory: { experimentPeakRssKb: 150_000, verifierPeakRssKb: 71_000 },
  };
}

// Regenerates the committed fixture when run directly.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = fileURLToPath(new URL('../fixtures/run-report-detailed.json', import.meta.url));
  writeFileSync(path, `${JSON.stringify(detailedReportFixture(), null, 2)}\n`);
  // `npm run lint` checks JSON too: write it the way Biome formats it.
  execFileSync('npx', ['biome', 'format', '--write', path], { stdio: 'ignore' });
  process.stdout.write(`wrote ${path}\n`);
}

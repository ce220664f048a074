import { paginateQuery } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { partitionKey } from '../../contract/ledger-keys.js';
import { DEFAULT_MODES, type Mode } from '../../contract/topology.js';
import { startEmbeddedEnvironment } from '../../harness/environments/embedded.js';
import type { ExperimentEnvironment } from '../../harness/environments/environment.js';
import { NO_FAULTS } from '../../harness/local-aws/faults/faults.js';
import { DEFAULTS } from '../../harness/options/declaration.js';
import { type ExperimentConfig, newRunId, runExperiment } from '../../harness/run/experiment.js';
import { buildManifest } from '../../harness/run/producer.js';

const quiet = { phase: () => undefined };

function config(overrides: Partial<ExperimentConfig>): ExperimentConfig {
  return {
    messages: 200,
    accounts: 10,
    crashRate: 0.02,
    batchSize: 10,
    seed: 'it-crash',
    modes: DEFAULT_MODES,
    concurrency: undefined,
    visibilityTimeoutSeconds: DEFAULTS.visibilityTimeoutSeconds,
    faults: NO_FAULTS,
    ...overrides,
  };
}

/** Counts applications per event straight from the table, independently of the verifier's code. */
async function independentCount(env: ExperimentEnvironment, runId: string, mode: Mode) {
  const applications = new Map<string, number>();
  let ledgerCents = 0;
  let balanceCents = 0;
  const pages = paginateQuery(
    { client: env.ddb },
    {
      TableName: env.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': partitionKey(runId, mode) },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const sk = String(item.sk);
      if (sk.startsWith('APP#')) {
        // A processed marker counts its own applications; other modes write one record per application.
        const times = Number(item.applications);
        applications.set(String(item.eventId), (applications.get(String(item.eventId)) ?? 0) + times);
        ledgerCents += Number(item.amountCents) * times;
      } else if (sk.startsWith('BAL#')) {
        balanceCents += Number(item.balanceCents);
        // The one-write modes: each application is an entry of a list on the balance it credited.
        for (const [name, entries] of Object.entries(item)) {
          if (!name.startsWith('APP#') || !Array.isArray(entries)) continue;
          const eventId = name.slice('APP#'.length);
          applications.set(eventId, (applications.get(eventId) ?? 0) + entries.length);
          for (const entry of entries) ledgerCents += Number(String(entry).split(':')[2]);
        }
      }
    }
  }
  return { applications, ledgerCents, balanceCents };
}

describe('the embedded experiment (fauxqs, DynamoDB Local, real handler processes, real SIGKILLs)', () => {
  let env: ExperimentEnvironment | undefined;

  afterEach(async () => {
    await env?.stop();
    env = undefined;
  });

  async function run(overrides: Partial<ExperimentConfig>) {
    const cfg = config(overrides);
    env = await startEmbeddedEnvironment({
      modes: cfg.modes,
      crashRate: cfg.crashRate,
      crashSeed: cfg.seed,
      batchSize: cfg.batchSize,
      ...(cfg.concurrency !== undefined ? { concurrency: cfg.concurrency } : {}),
      visibilityTimeoutSeconds: cfg.visibilityTimeoutSeconds,
    });
    const runId = newRunId(cfg.seed);
    const report = await runExperiment(env, cfg, runId, quiet);
    return { cfg, runId, report, env };
  }

  it('with crashes: at-most-once loses, at-least-once duplicates, effectively-once applies each event once', async () => {
    const { cfg, runId, report, env: live } = await run({});
    const amo = report.modes['at-most-once'];
    const alo = report.modes['at-least-once'];
    const eo = report.modes['effectively-once'];
    if (!amo || !alo || !eo) throw new Error('missing a mode in the report');

    expect(amo.lost).toBeGreaterThan(0);
    expect(amo.duplicated).toBe(0);
    expect(amo.driftCents).toBeLessThan(0);

    expect(alo.duplicated).toBeGreaterThan(0);
    expect(alo.lost).toBe(0);
    expect(alo.driftCents).toBeGreaterThan(0);

    expect(eo).toMatchObject({
      appliedOnce: cfg.messages,
      lost: 0,
      duplicated: 0,
      driftCents: 0,
      deadLettered: 0,
    });
    expect(eo.deliveries).toBeGreaterThan(eo.produced);
    expect(eo.crashes).toBeGreaterThan(0);
    expect(eo.suppressedDuplicates).toBeGreaterThan(0);

    // The drain round by round: every message's first delivery, then the failed batches' returns,
    // all of the runtime's deliveries between them.
    const [first, ...later] = report.drainRounds ?? [];
    expect(first).toMatchObject({ receiveCount: 1, records: cfg.messages * DEFAULT_MODES.length });
    expect(first?.failedBatches).toBeGreaterThan(0);
    expect(later[0]?.receiveCount).toBe(2);
    const roundRecords = (report.drainRounds ?? []).reduce((sum, round) => sum + round.records, 0);
    const runtimeDeliveries = DEFAULT_MODES.reduce(
      (sum, mode) => sum + (report.modes[mode]?.runtime?.deliveries ?? 0),
      0,
    );
    expect(roundRecords).toBe(runtimeDeliveries);

    const manifest = buildManifest(runId, cfg.seed, cfg.messages, cfg.accounts);
    for (const mode of DEFAULT_MODES) {
      const outcome = report.modes[mode];
      if (!outcome) throw new Error(`no outcome for ${mode}`);
      expect(outcome.consistent, `${mode} ledger equals balances`).toBe(true);
      // Every crash the handler recorded is a process the local runtime saw die: killed by the
      // crash, or by the function timeout if a loaded machine let it expire between the crash's
      // record and its SIGKILL.
      const died = outcome.runtime?.crashes ?? 0;
      expect(outcome.crashes, `${mode} crashes`).toBeGreaterThanOrEqual(died);
      expect(outcome.crashes, `${mode} crashes`).toBeLessThanOrEqual(died + (outcome.runtime?.timeouts ?? 0));

      const direct = await independentCount(live, runId, mode);
      const counts = manifest.events.map((event) => direct.applications.get(event.eventId) ?? 0);
      expect(outcome.appliedOnce, `${mode} appliedOnce`).toBe(counts.filter((n) => n === 1).length);
      expect(outcome.duplicated, `${mode} duplicated`).toBe(counts.filter((n) => n > 1).length);
      expect(outcome.extraApplications, `${mode} extra`).toBe(
        counts.reduce((sum, n) => sum + Math.max(0, n - 1), 0),
      );
      // Crashes alone never exhaust ten receives here, so nothing is dead-lettered and every event
      // without an application is lost.
      expect(outcome.deadLettered, `${mode} dead-lettered`).toBe(0);
      expect(outcome.lost, `${mode} lost`).toBe(counts.filter((n) => n === 0).length);
      expect(outcome.expectedCents).toBe(manifest.expectedCents);
      expect(outcome.actualCents).toBe(direct.balanceCents);
      expect(outcome.ledgerCents).toBe(direct.ledgerCents);
    }
  });

  it('without crashes: every mode applies every event exactly once and the money adds up', async () => {
    // A timeout is a crash-like failure and would (rightly) break exactness, so keep every
    // invocation far from it: two batches in flight per mode, and a 10 s visibility timeout (a 9 s
    // function timeout, not the default 2 s) that costs a run without crashes nothing, since no
    // message waits one out. At the then default 3 s, a loaded 2-core machine once timed out one.
    const { cfg, report } = await run({
      crashRate: 0,
      seed: 'it-clean',
      messages: 150,
      concurrency: 2,
      visibilityTimeoutSeconds: 10,
    });
    for (const mode of DEFAULT_MODES) {
      expect(report.modes[mode]?.runtime?.timeouts, `${mode} timeouts`).toBe(0);
      expect(report.modes[mode], mode).toMatchObject({
        produced: cfg.messages,
        deliveries: cfg.messages,
        appliedOnce: cfg.messages,
        duplicated: 0,
        lost: 0,
        deadLettered: 0,
        driftCents: 0,
        crashes: 0,
        consistent: true,
      });
    }
  });
});

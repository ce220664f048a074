import { describe, expect, it } from 'vitest';
import { NO_FAULTS } from '../../../../harness/local-aws/faults/faults.js';
import { chargeRows } from '../../../../harness/report/charge-table.js';
import { formatFaultTable } from '../../../../harness/report/fault-table.js';
import { formatProgress, progressLegend } from '../../../../harness/report/progress-line.js';
import { firstDrainOf, formatRedriveTable } from '../../../../harness/report/redrive-tables.js';
import { formatTable } from '../../../../harness/report/result-table.js';
import { formatSummary } from '../../../../harness/report/terminal.js';
import { violations } from '../../../../harness/report/violations.js';
import type { ExperimentReport } from '../../../../harness/run/experiment.js';
import { modeOutcome } from '../../../support/outcome.js';

const runtime = {
  deliveries: 240,
  acknowledged: 200,
  inFlight: 0,
  crashes: 4,
  timeouts: 0,
  slowestInvocationMs: 90,
  coldStarts: 5,
  visibilityOverruns: 0,
  injected: {
    redelivered: 0,
    kills: 0,
    slowInvocations: 0,
    throttled: 0,
    serverErrors: 0,
    lostResponses: 0,
    conflicts: 0,
  },
};

const outcome = {
  ...modeOutcome({
    produced: 200,
    deliveries: 240,
    appliedOnce: 186,
    duplicated: 14,
    extraApplications: 14,
    expectedCents: 978_313,
    actualCents: 1_045_955,
    driftCents: 67_642,
    ledgerCents: 1_045_955,
    crashes: 4,
  }),
  throughputPerSecond: 10,
};

const LOCAL_RUN_CONFIG = { messages: 200, accounts: 10, crashRate: 0.02, seed: 's', faults: NO_FAULTS };

/** A local run's report as the summary reads it: run r on embedded, 200 messages, the rest given. */
function localRun(fields: Record<string, unknown>): ExperimentReport {
  return {
    runId: 'r',
    target: 'embedded',
    durationMs: 1000,
    config: LOCAL_RUN_CONFIG,
    ...fields,
  } as unknown as ExperimentReport;
}

describe('report formatting', () => {
  it('prints one aligned row per mode with money in dollars and cents', () => {
    const table = formatTable({ modes: { 'at-least-once': outcome } } as unknown as ExperimentReport);
    const [header, rule, row] = table.split('\n');
    expect(header).toMatch(
      /^mode\s+produced\s+deliveries\s+applied once\s+duplicated \(extra\)\s+lost\s+dead-lettered/,
    );
    expect(rule).toMatch(/^-+( +-+)+$/);
    expect(row).toMatch(
      /^at-least-once\s+200\s+240\s+186\s+14 \(14\)\s+0\s+0\s+0\s+0\s+9,783\.13\s+10,459\.55\s+676\.42\s+4\s+yes$/,
    );
    expect(row?.length).toBe(header?.length);
  });

  it('shows negative drift and an inconsistent ledger plainly', () => {
    const table = formatTable({
      modes: { 'at-most-once': { ...outcome, driftCents: -1_005, consistent: false } },
    } as unknown as ExperimentReport);
    expect(table).toMatch(/-10\.05\s+4\s+NO !$/);
  });

  it('marks the counts a correct run cannot produce: an unexpected application and a broken promise of the mode', () => {
    const table = formatTable({
      modes: {
        'at-least-once': { ...outcome, lost: 2, unexpected: 1 },
        'effectively-once': { ...outcome, duplicated: 1, extraApplications: 1, driftCents: 5 },
      },
    } as unknown as ExperimentReport);
    const [, , alo, eo] = table.split('\n');
    expect(alo).toMatch(/\s2 !\s+0\s+1 !\s+0\s/);
    expect(eo).toMatch(/1 \(1\) !/);
    expect(eo).toMatch(/0\.05 !/);
  });

  it('tells the drain round by round: the first deliveries, then each redelivery a visibility timeout after the failures', () => {
    const report = localRun({
      environment: { modes: { 'at-least-once': { visibilityTimeoutSeconds: 3, functionTimeoutSeconds: 2 } } },
      modes: { 'at-least-once': { ...outcome, runtime } },
      drainRounds: [
        { receiveCount: 1, records: 800, failedBatches: 20, doneAtMs: 4_650 },
        { receiveCount: 2, records: 150, failedBatches: 1, doneAtMs: 7_910 },
        { receiveCount: 3, records: 10, failedBatches: 0, doneAtMs: 10_960 },
      ],
    });
    expect(formatSummary(report, 'reports/r.json')).toContain(
      'drain by delivery: 1st (800 records) done at 4.7 s, 20 batches failed → 2nd (150) at 7.9 s, 1 batch failed → ' +
        '3rd (10) at 11.0 s; a failed batch comes back one visibility timeout (3 s) after its receive',
    );
    const clean = {
      ...report,
      drainRounds: [{ receiveCount: 1, records: 800, failedBatches: 0, doneAtMs: 3_700 }],
    };
    expect(formatSummary(clean as ExperimentReport, 'reports/r.json')).toContain(
      'drain by delivery: 1st (800 records) done at 3.7 s\n',
    );
    expect(formatSummary({ ...report, drainRounds: undefined } as ExperimentReport, 'r.json')).not.toContain(
      'drain by delivery',
    );
  });

  it('says where a local run spent its time: prewarmed environments, cold starts, the slowest invocation against the timeout', () => {
    const report = localRun({
      environment: {
        modes: {
          'at-least-once': { functionTimeoutSeconds: 3 },
          'effectively-once': { functionTimeoutSeconds: 3 },
        },
      },
      modes: {
        'at-least-once': {
          ...outcome,
          runtime: { ...runtime, prewarmed: 2, slowestInvocationMs: 1_840, slowestInitMs: 420 },
        },
        'effectively-once': {
          ...outcome,
          runtime: { ...runtime, prewarmed: 2, timeouts: 1, visibilityOverruns: 2 },
        },
      },
    });
    expect(formatSummary(report, 'reports/r.json')).toContain(
      'local runtime: 4 consumer environments prewarmed, 10 cold starts, slowest init 0.4 s, slowest invocation 1.8 s (function timeout 3 s), 1 timeouts, 2 visibility overruns',
    );
    // A slow machine is told what gives its invocations room.
    expect(formatSummary(report, 'reports/r.json')).toMatch(
      /note: 1 invocation\(s\) hit the local function timeout.*try --visibility-timeout 5\./,
    );
    const slow = { ...report, config: { ...report.config, faults: { ...NO_FAULTS, workDelayMs: 6_000 } } };
    expect(formatSummary(slow as ExperimentReport, 'reports/r.json')).toContain(
      'slowest invocation 1.8 s (function timeout 3 s + work delay 6.0 s)',
    );
  });

  it('does not blame at-most-once for duplicates the environment delivered, and says where they came from', () => {
    const amo = {
      ...outcome,
      duplicated: 3,
      runtime: { ...runtime, injected: { ...runtime.injected, redelivered: 3 } },
    };
    const report = {
      runId: 'r',
      target: 'embedded',
      durationMs: 1000,
      config: {
        messages: 200,
        accounts: 10,
        crashRate: 0,
        seed: 's',
        faults: { ...NO_FAULTS, redeliveryRate: 0.1 },
      },
      modes: { 'at-most-once': amo },
    } as unknown as ExperimentReport;
    expect(formatTable(report)).not.toContain('!');
    const summary = formatSummary(report, 'reports/r.json');
    expect(summary).toContain('faults: redelivery 0.1');
    expect(summary).toContain("at-most-once's duplicates come from the environment");
    expect(formatFaultTable(report)).toMatch(/^at-most-once\s+0\s+0\s+3\s/m);
    const clean = {
      ...report,
      modes: { 'at-most-once': { ...outcome, duplicated: 3 } },
    } as unknown as ExperimentReport;
    expect(formatTable(clean)).toMatch(/3 \(14\) !/);
  });

  it('does not count money in the DLQ as drift, and flags a payload that differs from the manifest', () => {
    const exact = { ...outcome, duplicated: 0, extraApplications: 0 };
    const table = formatTable({
      modes: {
        'effectively-once': { ...exact, deadLettered: 2, deadLetteredCents: 500, driftCents: -500 },
        'at-least-once': { ...outcome, payloadMismatches: 1 },
      },
    } as unknown as ExperimentReport);
    const [, , eo, alo] = table.split('\n');
    expect(eo).not.toContain('!');
    expect(alo).toMatch(/\s1 !\s/);
    const drifted = formatTable({
      modes: {
        'effectively-once': { ...outcome, deadLettered: 2, deadLetteredCents: 500, driftCents: -400 },
      },
    } as unknown as ExperimentReport);
    expect(drifted).toMatch(/-4\.00 !/);
  });

  it('shows the outage in the faults line and its 503s in the fault table, and says when it met nothing', () => {
    const report = {
      runId: 'r',
      target: 'embedded',
      durationMs: 1000,
      config: {
        messages: 200,
        accounts: 10,
        crashRate: 0,
        seed: 's',
        faults: { ...NO_FAULTS, outage: { afterSeconds: 2, forSeconds: 30 } },
      },
      modes: {
        'effectively-once': {
          ...outcome,
          runtime: { ...runtime, injected: { ...runtime.injected, outageRejections: 57 } },
        },
      },
    } as unknown as ExperimentReport;
    const summary = formatSummary(report, 'reports/r.json');
    expect(summary).toContain('faults: DynamoDB outage for 30 s from 2 s after the first send');
    expect(summary).not.toContain('no request met the DynamoDB outage');
    const table = formatFaultTable(report) ?? '';
    const [header, , row] = table.split('\n');
    const column = (line: string | undefined, index: number) => line?.trim().split(/\s{2,}/)[index];
    const index =
      header
        ?.trim()
        .split(/\s{2,}/)
        .indexOf('outage 503s') ?? -1;
    expect(index).toBeGreaterThan(0);
    expect(column(row, index)).toBe('57');

    const missed = {
      ...report,
      modes: { 'effectively-once': { ...outcome, runtime } },
    } as unknown as ExperimentReport;
    expect(formatSummary(missed, 'reports/r.json')).toContain(
      'note: no request met the DynamoDB outage: the queues were drained before it began, 2 s after the first send',
    );
  });

  it('prints no fault table when nothing was injected or seen', () => {
    expect(
      formatFaultTable({
        modes: { 'at-least-once': { ...outcome, runtime } },
      } as unknown as ExperimentReport),
    ).toBeUndefined();
  });

  it("counts the age guard's refusals after the redrive, and notes those of the final state", () => {
    const after = { ...outcome, duplicated: 0, extraApplications: 0, deadLettered: 9, tooOldToDedupe: 9 };
    const redrive = {
      deadLetteredBefore: 9,
      redriven: 9,
      appliedAfterRedrive: 0,
      duplicatedByRedrive: 0,
      deadLetteredAgain: 9,
      lost: 0,
      firstDrain: outcome,
    };
    const table = formatRedriveTable({ modes: { 'effectively-once': { ...after, redrive } } }) ?? '';
    const [header, , row] = table.split('\n');
    const cells = (line: string | undefined) => line?.trim().split(/\s{2,}/) ?? [];
    expect(cells(row)[cells(header).indexOf('too old to dedupe')]).toBe('9');

    const report = localRun({
      modes: { 'effectively-once': { ...outcome, tooOldToDedupe: 3 } },
    });
    expect(formatSummary(report, 'reports/r.json')).toContain('the age guard refused 3 in effectively-once');
  });

  it("prints the first drain with its own runtime counts and the producer's unsent events, so its marks are the first drain's", () => {
    const first = {
      ...outcome,
      duplicated: 0,
      extraApplications: 0,
      lost: 2,
      driftCents: -200,
      deadLetteredCents: 0,
    };
    const redrive = {
      deadLetteredBefore: 0,
      redriven: 0,
      appliedAfterRedrive: 0,
      duplicatedByRedrive: 0,
      deadLetteredAgain: 0,
      lost: 2,
      firstDrain: { ...first, runtime: { injected: { redelivered: 0 } } },
    };
    const final = {
      ...first,
      neverSent: { events: 2, cents: 200 },
      runtime: { injected: { redelivered: 5 } },
      redrive,
    };
    const view = firstDrainOf({ modes: { 'effectively-once': final } } as unknown as ExperimentReport);
    const row = view?.modes['effectively-once'];
    expect(row?.runtime).toEqual({ injected: { redelivered: 0 } });
    expect(row?.neverSent).toEqual({ events: 2, cents: 200 });
    // A dual write's unsent events are not the consumer's loss: no mark in the first drain either.
    expect(formatTable(view ?? { modes: {} })).not.toContain('!');
  });

  it('the summary says when a seed drew no crash, so an all-exact table is not misread', () => {
    const report = localRun({
      config: { ...LOCAL_RUN_CONFIG, seed: 'final' },
      modes: { 'at-least-once': { ...outcome, crashes: 0 } },
    });
    expect(formatSummary(report, 'reports/r.json')).toContain('no crash was drawn for seed final');
    const withCrashes = { ...report, modes: { 'at-least-once': outcome } } as unknown as ExperimentReport;
    expect(formatSummary(withCrashes, 'reports/r.json')).not.toContain('note:');
  });

  it('progress shows what the consumers did when they can be seen, and the queue always', () => {
    const snapshot = {
      elapsedMs: 5_250,
      modes: {
        'at-most-once': {
          visible: 3,
          inFlight: 10,
          drained: false,
          live: {
            deliveries: 100,
            acknowledged: 80,
            inFlight: 10,
            crashes: 2,
            timeouts: 0,
            slowestInvocationMs: 9,
            coldStarts: 1,
            visibilityOverruns: 0,
            injected: runtime.injected,
          },
        },
        'effectively-once': { visible: 0, inFlight: 0, drained: true },
      },
    } as const;
    const line = formatProgress(snapshot);
    expect(line).toBe(
      'AMO done 80, delivered 100, running 10, crashes 2, queued 3, invisible 10 │ EO queued 0, invisible 0 ✓ │ 5.3 s',
    );
    // A narrow terminal: done/delivered, crashes, and what the queue holds (the legend says so).
    expect(formatProgress(snapshot, { compact: true })).toBe('AMO 80/100 c2 q13 │ EO q0 ✓ │ 5.3 s');
    expect(progressLegend(['at-most-once', 'effectively-once'])).toMatch(
      /^progress, per mode \(AMO at-most-once, EO effectively-once\): done = records acknowledged \(the table counts events applied once\), delivered = records handed to an invocation/,
    );
  });

  it('folds the result table to fit a terminal: every mode within 100 columns, the quiet columns named below', () => {
    const modes = Object.fromEntries(
      ['at-most-once', 'at-least-once', 'effectively-once', 'powertools-idempotency'].map((mode) => [
        mode,
        { ...outcome, deadLettered: mode === 'at-most-once' ? 3 : 0 },
      ]),
    );
    const report = { modes } as unknown as ExperimentReport;
    const full = formatTable(report);
    expect(Math.max(...full.split('\n').map((line) => line.length))).toBeGreaterThan(150);
    expect(formatTable(report, 200)).toBe(full);
    const folded = formatTable(report, 100);
    const lines = folded.split('\n');
    expect(Math.max(...lines.slice(0, -1).map((line) => line.length))).toBeLessThanOrEqual(100);
    expect(lines[0]).toMatch(
      /^mode\s+sent\s+deliveries\s+applied 1×\s+dup \(extra\)\s+lost\s+in DLQ\s+drift\s+crashes$/,
    );
    expect(lines[2]).toMatch(/^at-most-once\s+200\s+240\s+186\s+14 \(14\) !\s+0\s+3\s+676\.42\s+4$/);
    expect(lines.at(-1)).toBe(
      '(folded to fit the terminal: sent = produced; applied 1× = applied once; dup (extra) = duplicated (extra); in DLQ = dead-lettered; drift = actual − expected balances; every mode 0 or yes: unexpected, mismatched, consistent; every column in the JSON and on the page)',
    );
    // A count a correct run cannot produce keeps its column and its mark.
    const broken = formatTable(
      {
        modes: { ...modes, 'effectively-once': { ...outcome, unexpected: 1 } },
      } as unknown as ExperimentReport,
      100,
    );
    expect(broken.split('\n')[0]).toContain('unexpected');
    expect(broken).toMatch(/^effectively-once\s.*\s1 !/m);
  });
});

describe('side effects in the tables', () => {
  const exact = modeOutcome({ produced: 200, appliedOnce: 200, expectedCents: 10_000, actualCents: 10_000 });

  it('does not mark the events a dual-writing producer never sent, and marks any loss beyond them', () => {
    const unsent = { events: 3, cents: 300 };
    const lostByProducer = { ...exact, appliedOnce: 197, lost: 3, actualCents: 9_700, driftCents: -300 };
    expect(violations('effectively-once', { ...lostByProducer, neverSent: unsent })).toEqual(new Set());
    // Without the producer's count the same numbers are a broken promise.
    expect(violations('effectively-once', lostByProducer)).toEqual(new Set(['lost', 'driftCents']));
    // One more lost than the producer explains: the consumer's.
    const oneMore = { ...lostByProducer, appliedOnce: 196, lost: 4, actualCents: 9_600, driftCents: -400 };
    expect(violations('effectively-once', { ...oneMore, neverSent: unsent })).toEqual(
      new Set(['lost', 'driftCents']),
    );
  });

  it('marks a double charge only in the mode with an idempotency key', () => {
    const charged = {
      ...exact,
      charges: 201,
      chargedCents: 10_050,
      overchargedCents: 50,
      doubleCharged: 1,
      neverCharged: 0,
    };
    const rows = chargeRows({
      modes: { 'charge-no-key': charged, 'charge-with-key': charged },
    } as unknown as ExperimentReport);
    const marked = rows.map((cells) => cells.filter((cell) => cell.impossible).map((cell) => cell.text));
    expect(rows.map((cells) => cells[0]?.text)).toEqual(['charge-no-key', 'charge-with-key']);
    expect(marked).toEqual([[], ['1', '0.50']]);
    // Events a dual-writing producer never sent were never charged: the producer's, not marked.
    const unsent = { ...charged, doubleCharged: 0, overchargedCents: 0, neverCharged: 2 };
    const withProducer = chargeRows({
      modes: {
        'charge-with-key': { ...unsent, neverSent: { events: 2, cents: 200 } },
        'charge-no-key': { ...unsent, neverSent: { events: 1, cents: 100 } },
      },
    } as unknown as ExperimentReport);
    expect(
      withProducer.map((cells) => cells.filter((cell) => cell.impossible).map((cell) => cell.text)),
    ).toEqual([[], ['2']]);
    // Modes without a charge get no row.
    expect(chargeRows({ modes: { 'effectively-once': exact } } as unknown as ExperimentReport)).toEqual([]);
  });
});

describe("at-most-once's duplicates from a second delivery of an applied message", () => {
  const base = modeOutcome({ produced: 10, appliedOnce: 9, duplicated: 1, extraApplications: 1 });

  it('are not marked when the message was also dead-lettered (its delete did not take), for at-most-once only', () => {
    const deliveredAgain = { ...base, appliedAndDeadLettered: 1 };
    expect(violations('at-most-once', deliveredAgain).has('duplicated')).toBe(false);
    // The same numbers in a mode that promises no duplicates per event stay a broken promise.
    expect(violations('effectively-once', deliveredAgain).has('duplicated')).toBe(true);
    // Without a second delivery, an at-most-once duplicate is marked.
    expect(violations('at-most-once', base).has('duplicated')).toBe(true);
  });
});

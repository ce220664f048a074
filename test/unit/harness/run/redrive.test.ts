import { describe, expect, it } from 'vitest';
import { NO_FAULTS } from '../../../../harness/local-aws/faults/faults.js';
import { redriveTable } from '../../../../harness/report/html/summary.js';
import { formatRedriveTable } from '../../../../harness/report/redrive-tables.js';
import { formatSummary } from '../../../../harness/report/terminal.js';
import type { ExperimentReport } from '../../../../harness/run/experiment.js';
import { leadWithFinalState, redriveCounts } from '../../../../harness/run/redrive.js';
import type { ModeOutcome } from '../../../../verifier/outcome.js';
import { modeOutcome } from '../../../support/outcome.js';

const before: ModeOutcome = modeOutcome({
  produced: 100,
  deliveries: 130,
  appliedOnce: 80,
  duplicated: 4,
  extraApplications: 5,
  deadLettered: 16,
  deadLetteredCents: 8_000,
  expectedCents: 50_000,
  actualCents: 44_000,
  driftCents: -6_000,
  ledgerCents: 44_000,
  crashes: 9,
  appliedAndDeadLettered: 6,
});

describe('what a redrive did, from the outcomes before and after it', () => {
  it('counts the dead-lettered events it got applied, the duplicates it added and what is dead-lettered again', () => {
    // 16 dead-lettered + 6 applied-and-dead-lettered were redriven: 14 of the 16 applied (one of them
    // twice), 2 dead-lettered again; the 6 already applied were applied again (at-least-once).
    const after: ModeOutcome = {
      ...before,
      deliveries: 160,
      appliedOnce: 80 + 14 - 7,
      duplicated: 4 + 7,
      extraApplications: 5 + 6 + 1,
      deadLettered: 2,
      deadLetteredCents: 1_000,
      appliedAndDeadLettered: 0,
    };
    expect(redriveCounts(before, after, 22)).toEqual({
      deadLetteredBefore: 16,
      redriven: 22,
      appliedAfterRedrive: 14,
      duplicatedByRedrive: 7,
      deadLetteredAgain: 2,
      lost: 0,
    });
  });

  it('is all zeros but the move when the redrive changed nothing (an empty DLQ)', () => {
    expect(redriveCounts({ ...before, deadLettered: 0 }, { ...before, deadLettered: 0 }, 0)).toEqual({
      deadLetteredBefore: 0,
      redriven: 0,
      appliedAfterRedrive: 0,
      duplicatedByRedrive: 0,
      deadLetteredAgain: 0,
      lost: 0,
    });
  });
});

describe('the table after the redrive', () => {
  // effectively-once before: 78 applied once, 16 dead-lettered, 6 applied and dead-lettered.
  const eoBefore: ModeOutcome = { ...before, appliedOnce: 84, duplicated: 0, extraApplications: 0 };
  const report = (eo: Partial<ModeOutcome>) => {
    const after: ModeOutcome = {
      ...eoBefore,
      appliedOnce: 99,
      deadLettered: 1,
      deadLetteredCents: 500,
      driftCents: -500,
      ...eo,
    };
    return {
      runId: 'r',
      target: 'embedded',
      durationMs: 1000,
      config: { messages: 100, accounts: 10, crashRate: 0.1, seed: 's', faults: NO_FAULTS },
      environment: { modes: {} },
      redrive: { afterSeconds: 5, phasesMs: { wait: 5000, move: 400, drain: 9800, verify: 1100 } },
      modes: {
        'effectively-once': leadWithFinalState({ ...eoBefore, throughputPerSecond: 10 }, after, 22),
      },
    } as unknown as ExperimentReport;
  };

  it('prints one row per redriven mode under its heading, with the drift and the ledger check', () => {
    const summary = formatSummary(report({}), 'r.json');
    expect(summary).toContain(
      'the redrive (5 s after the first drain; move 0.4 s, drain 9.8 s, verify 1.1 s):',
    );
    const table = formatRedriveTable(report({})) ?? '';
    const [header, , row] = table.split('\n');
    expect(header).toMatch(
      /^mode\s+dead-lettered before\s+redriven\s+applied after the redrive\s+duplicated by the redrive\s+dead-lettered again\s+too old to dedupe\s+lost\s+unexpected\s+drift\s+consistent$/,
    );
    expect(row).toMatch(/^effectively-once\s+16\s+22\s+15\s+0\s+1\s+0\s+0\s+0\s+-5\.00\s+yes$/);
  });

  it('marks what effectively-once cannot do after a redrive: a duplicate, a loss, a drift the DLQ does not explain', () => {
    const table =
      formatRedriveTable(
        report({ appliedOnce: 98, duplicated: 1, extraApplications: 1, lost: 1, driftCents: 300 }),
      ) ?? '';
    const row = table.split('\n')[2] ?? '';
    expect(row).toMatch(/1 !\s+1\s+0\s+1 !\s+0\s+3\.00 !\s+yes$/);
  });

  it('leads the summary with the final state, then the redrive, then the first drain, each under its heading', () => {
    const lines = formatSummary(report({}), 'r.json').split('\n');
    const at = (text: string) => lines.findIndex((line) => line.startsWith(text));
    const final = at('after the redrive (the final state):');
    const redrive = at('the redrive (5 s after the first drain');
    const first = at('the first drain, before the redrive:');
    expect([final, redrive, first].every((index) => index > 0)).toBe(true);
    expect(final < redrive && redrive < first).toBe(true);
    const row = (heading: number) => lines[heading + 3] ?? '';
    // The final table: 99 applied once, 1 dead-lettered; the first drain's: 84 and 16.
    expect(row(final)).toMatch(/^effectively-once\s+100\s+130\s+99\s+0 \(0\)\s+0\s+1\s/);
    expect(row(first)).toMatch(/^effectively-once\s+100\s+130\s+84\s+0 \(0\)\s+0\s+16\s/);
  });

  it('is absent without a redrive', () => {
    const mode = { ...eoBefore, throughputPerSecond: 10 };
    expect(
      formatRedriveTable({ modes: { 'effectively-once': mode } } as unknown as ExperimentReport),
    ).toBeUndefined();
  });
});

describe('the page’s table after the redrive', () => {
  it('renders the same rows and marks as the terminal, and nothing without a redrive', () => {
    const eo: ModeOutcome = { ...before, appliedOnce: 84, duplicated: 0, extraApplications: 0 };
    const after: ModeOutcome = { ...eo, appliedOnce: 99, deadLettered: 1, lost: 1, driftCents: -500 };
    const report = {
      redrive: { afterSeconds: 0, phasesMs: { wait: 0, move: 400, drain: 9800, verify: 1100 } },
      modes: {
        'effectively-once': leadWithFinalState({ ...eo, throughputPerSecond: 1 }, after, 22),
      },
    } as unknown as ExperimentReport;
    const html = redriveTable(report);
    expect(html).toContain('<caption>the redrive (right after the first drain; move 0.4 s');
    expect(html).toContain('<th scope="col" class="num">applied after the redrive</th>');
    expect(html).toContain('<mark title="a correct run cannot produce this">1 !</mark>');
    expect(redriveTable({ modes: { 'effectively-once': { ...eo } } } as unknown as ExperimentReport)).toBe(
      '',
    );
  });
});

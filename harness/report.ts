import type { Mode } from '../lib/topology.js';
import type { DrainSnapshot } from './drain.js';
import type { ExperimentReport } from './experiment.js';

const money = (cents: number): string => {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
};

/** The result table: one row per mode. */
export function formatTable(report: ExperimentReport): string {
  const header = [
    'mode',
    'produced',
    'deliveries',
    'applied once',
    'duplicated (extra)',
    'lost',
    'dead-lettered',
    'expected',
    'actual',
    'drift',
    'crashes',
    'consistent',
  ];
  const rows = (Object.entries(report.modes) as [Mode, NonNullable<ExperimentReport['modes'][Mode]>][]).map(
    ([mode, m]) => [
      mode,
      String(m.produced),
      String(m.deliveries),
      String(m.appliedOnce),
      `${m.duplicated} (${m.extraApplications})`,
      String(m.lost),
      String(m.deadLettered),
      money(m.expectedCents),
      money(m.actualCents),
      money(m.driftCents),
      String(m.crashes),
      m.consistent ? 'yes' : 'NO',
    ],
  );
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

export function formatSummary(report: ExperimentReport, reportPath: string): string {
  const c = report.config;
  const seconds = (report.durationMs / 1000).toFixed(1);
  return [
    `run ${report.runId} on ${report.target}: ${c.messages} messages × ${Object.keys(report.modes).length} modes, ` +
      `${c.accounts} accounts, crash rate ${c.crashRate}, seed ${c.seed}, ${seconds} s`,
    '',
    formatTable(report),
    '',
    ...notes(report),
    `report: ${reportPath}`,
  ].join('\n');
}

/** What a reader might misread in the table. */
function notes(report: ExperimentReport): string[] {
  const outcomes = Object.values(report.modes);
  const notes: string[] = [];
  if (report.config.crashRate > 0 && outcomes.every((outcome) => outcome?.crashes === 0)) {
    notes.push(
      `note: no crash was drawn for seed ${report.config.seed} at crash rate ${report.config.crashRate}, so every mode ` +
        'is exact; try another --seed or a higher --crash-rate to see the semantics differ.',
    );
  }
  if (outcomes.some((outcome) => outcome && !outcome.consistent)) {
    notes.push(
      'note: consistent = NO means the application records do not sum to the balances: a bug, not a semantic.',
    );
  }
  return notes.length > 0 ? [...notes, ''] : [];
}

/** `at-most-once` → `AMO`: derived, so a new mode in the topology needs no edit here. */
const short = (mode: string): string =>
  mode
    .split('-')
    .map((part) => part.charAt(0).toUpperCase())
    .join('');

/**
 * One progress line, per mode: records done (acknowledged) and delivered, records in running
 * invocations, crashes, then the queue: visible and invisible (received and not deleted: running,
 * or from a crashed batch waiting out its visibility timeout); then the elapsed time. A deployed
 * target sees only the queue, not the consumers.
 */
export function formatProgress(snapshot: DrainSnapshot): string {
  const parts = (Object.entries(snapshot.modes) as [Mode, NonNullable<DrainSnapshot['modes'][Mode]>][]).map(
    ([mode, s]) => {
      const live = s.live
        ? `done ${s.live.acknowledged}, delivered ${s.live.deliveries}, running ${s.live.inFlight}, crashes ${s.live.crashes}, `
        : '';
      return `${short(mode)} ${live}queued ${s.visible}, invisible ${s.inFlight}${s.drained ? ' ✓' : ''}`;
    },
  );
  return `${parts.join(' │ ')} │ ${(snapshot.elapsedMs / 1000).toFixed(1)} s`;
}

/** A run's drain, told round by round: for the terminal's summary and the page's facts. */
import type { ExperimentReport } from '../run/experiment.js';
import { seconds } from './seconds.js';

/**
 * `1st (800 records) done at 4.7 s, 20 batches failed → 2nd (150) at 7.9 s → …`, so the drain's
 * length explains itself: the first deliveries, then each redelivery a visibility timeout after
 * the batches that failed before it. Undefined for a report without rounds (a deployed stack).
 */
export function describeDrainRounds(report: ExperimentReport): string | undefined {
  const rounds = report.drainRounds ?? [];
  if (rounds.length === 0) return undefined;
  // A charge mode's visibility timeout is twice the others': the range, when they differ.
  const visibilities = Object.keys(report.modes).flatMap((mode) => {
    const settings = report.environment?.modes[mode as keyof typeof report.environment.modes];
    return settings === undefined ? [] : [settings.visibilityTimeoutSeconds];
  });
  const [shortest, longest] = [Math.min(...visibilities), Math.max(...visibilities)];
  const visibility = shortest === longest ? `${shortest} s` : `${shortest}–${longest} s`;
  const s = (ms: number) => seconds(Math.max(0, ms));
  const failed = (batches: number) =>
    batches > 0 ? `, ${batches} batch${batches === 1 ? '' : 'es'} failed` : '';
  const steps = rounds.map((round, index) =>
    index === 0
      ? `${ordinal(round.receiveCount)} (${round.records} records) done at ${s(round.doneAtMs)}${failed(round.failedBatches)}`
      : `${ordinal(round.receiveCount)} (${round.records}) at ${s(round.doneAtMs)}${failed(round.failedBatches)}`,
  );
  return (
    steps.join(' → ') +
    (rounds.length > 1 && visibilities.length > 0
      ? `; a failed batch comes back one visibility timeout (${visibility}) after its receive`
      : '')
  );
}

/** The summary's `drain by delivery:` line, when the report has rounds (a redrive's: its first drain's). */
export function drainRoundsLine(report: ExperimentReport): string[] {
  const rounds = describeDrainRounds(report);
  if (rounds === undefined) return [];
  return [`${report.redrive ? 'first drain' : 'drain'} by delivery: ${rounds}`];
}

const ordinal = (n: number): string =>
  `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;

/** The fault table (what was injected and what the runtime saw, per mode) and the run's fault flags. */
import type { FaultSettings } from '../local-aws/faults/faults.js';
import type { ExperimentReport } from '../run/experiment.js';
import { alignedTable } from './aligned-table.js';
import { modeRows } from './violations.js';

export const FAULT_COLUMNS = [
  'poison',
  're-sent',
  'redelivered',
  'throttled',
  '5xx',
  'lost responses',
  'conflicts',
  'outage 503s',
  'killed',
  'slow',
  'timeouts',
  'overruns',
  'retried cancellations',
  'conflicting reuse',
] as const;

/**
 * The fault table's rows, mode first then FAULT_COLUMNS: what was injected and what the runtime
 * saw. `notMeasured` stands for a count only the local runtime can see, on a deployed target.
 */
export function faultRows(report: Pick<ExperimentReport, 'modes'>, notMeasured: string): string[][] {
  return modeRows(report).map(([mode, m]) => {
    const injected = m.runtime?.injected;
    const live = (value: number | undefined) => (value === undefined ? notMeasured : String(value));
    return [
      mode,
      String(m.poison),
      String(m.producerDuplicates),
      live(injected?.redelivered),
      live(injected?.throttled),
      live(injected?.serverErrors),
      live(injected?.lostResponses),
      live(injected?.conflicts),
      // Older reports have no outage count: none was injected.
      live(injected && (injected.outageRejections ?? 0)),
      live(injected?.kills),
      live(injected?.slowInvocations),
      live(m.runtime?.timeouts),
      live(m.runtime?.visibilityOverruns),
      String(m.retriedCancellations),
      String(m.conflictingReuse),
    ];
  });
}

/** What was injected and what the runtime saw, per mode; printed when any of it is not zero. */
export function formatFaultTable(report: Pick<ExperimentReport, 'modes'>): string | undefined {
  const header = ['faults', ...FAULT_COLUMNS];
  const rows = faultRows(report, '-');
  const anything = rows.some((row) => row.slice(1).some((cell) => cell !== '0' && cell !== '-'));
  return anything ? alignedTable(header, rows) : undefined;
}

/** The fault flags of a run, as a reader would type them. */
export function describeFaults(faults: FaultSettings): string {
  const parts: string[] = [];
  if (faults.poisonRate > 0) parts.push(`poison ${faults.poisonRate}`);
  if (faults.producerDuplicateRate > 0) parts.push(`producer re-sends ${faults.producerDuplicateRate}`);
  if (faults.redeliveryRate > 0) parts.push(`redelivery ${faults.redeliveryRate}`);
  if (faults.throttleRate > 0) parts.push(`throttling ${faults.throttleRate}`);
  if (faults.workDelayMs > 0)
    parts.push(`work delay ${faults.workDelayMs} ms on ${faults.workDelayRate} of invocations`);
  if (faults.killRate > 0) parts.push(`kills ${faults.killRate}`);
  if (faults.providerLostResponseRate)
    parts.push(`provider responses lost ${faults.providerLostResponseRate}`);
  if (faults.producerCrashRate) parts.push(`producer kills ${faults.producerCrashRate}`);
  if (faults.relayCrashRate) parts.push(`relay kills ${faults.relayCrashRate}`);
  if (faults.outage)
    parts.push(
      `DynamoDB outage for ${faults.outage.forSeconds} s from ${faults.outage.afterSeconds} s after the first send`,
    );
  return parts.join(', ');
}

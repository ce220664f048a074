/** A run's summary as the terminal prints it: the run's lines around its tables and notes. */
import type { LiveModeStats } from '../environments/environment.js';
import { anyFault } from '../local-aws/faults/faults.js';
import type { ExperimentReport } from '../run/experiment.js';
import { formatChargeTable } from './charge-table.js';
import { drainRoundsLine } from './drain-rounds.js';
import { describeFaults, formatFaultTable } from './fault-table.js';
import { notes } from './notes.js';
import { redriveHeading, redriveRunTables } from './redrive-tables.js';
import { seconds } from './seconds.js';
import { modeRows } from './violations.js';

export function formatSummary(
  report: ExperimentReport,
  reportPath: string,
  htmlPath?: string,
  /** The terminal's columns: a wider result table folds to fit. */
  width = Number.POSITIVE_INFINITY,
): string {
  const c = report.config;
  const faults = formatFaultTable(report);
  const charges = formatChargeTable(report);
  return [
    `run ${report.runId} on ${report.target}: ${c.messages} messages × ${Object.keys(report.modes).length} modes, ` +
      `${c.accounts} accounts, crash rate ${c.crashRate}, seed ${c.seed}, ${seconds(report.durationMs)}${phases(report)}`,
    ...(anyFault(c.faults) ? [`faults: ${describeFaults(c.faults)}`] : []),
    ...runtimeLine(report),
    ...drainRoundsLine(report),
    '',
    ...redriveRunTables(report, redriveHeading(report), width),
    ...(charges ? [charges, ''] : []),
    ...producerLines(report),
    ...(faults ? [faults, ''] : []),
    ...notes(report),
    `report: ${reportPath}`,
    ...(htmlPath ? [`page:   ${htmlPath} (open it in a browser, or run with --open)`] : []),
  ].join('\n');
}

/** How the producer published, for a run through the outbox or a dual write. */
function producerLines(report: ExperimentReport): string[] {
  const p = report.producer;
  if (p === undefined) return [];
  const published = Object.values(p.published);
  const perMode = published.length > 0 ? Math.max(...published) : 0;
  return [
    `producer ${p.kind}: committed ${p.committed}, published up to ${perMode} per mode, ` +
      `never sent ${p.neverSent.length}, sent twice ${p.sentTwice.length}, ` +
      `producer kills ${p.producerCrashes}, relay kills ${p.relayCrashes}`,
    ...(p.neverSent.length > 0
      ? [
          'note: the events never sent were committed by the producer and lost before any queue saw them: ' +
            'counted as lost in every mode, and not marked, since no consumer could have applied them',
        ]
      : []),
    '',
  ];
}

/** ` (startup 2.8 s, produce 2.1 s, drain 26.7 s, verify 1.6 s)`, when the report has them. */
function phases(report: ExperimentReport): string {
  const p = report.phasesMs;
  if (p === undefined) return '';
  return ` (startup ${seconds(p.startup)}, produce ${seconds(p.produce)}, drain ${seconds(p.drain)}, verify ${seconds(p.verify)})`;
}

/**
 * Where a local run's time went inside the drain, so a slow run says why: how the environments
 * started, and how close the slowest invocation came to the function timeout.
 */
function runtimeLine(report: ExperimentReport): string[] {
  const rows = modeRows(report).filter(([, outcome]) => outcome.runtime !== undefined);
  if (rows.length === 0) return [];
  const sum = (pick: (runtime: LiveModeStats) => number) =>
    rows.reduce((total, [, outcome]) => total + (outcome.runtime ? pick(outcome.runtime) : 0), 0);
  const slowest = Math.max(...rows.map(([, outcome]) => outcome.runtime?.slowestInvocationMs ?? 0));
  const timeout = Math.min(
    ...rows.map(
      ([mode]) => report.environment?.modes[mode]?.functionTimeoutSeconds ?? Number.POSITIVE_INFINITY,
    ),
  );
  const prewarmed = sum((runtime) => runtime.prewarmed ?? 0);
  const slowestInit = Math.max(...rows.map(([, outcome]) => outcome.runtime?.slowestInitMs ?? 0));
  const workDelay = report.config.faults?.workDelayMs ?? 0;
  const limit = Number.isFinite(timeout)
    ? ` (function timeout ${timeout} s${workDelay > 0 ? ` + work delay ${seconds(workDelay)}` : ''})`
    : '';
  return [
    `local runtime: ${prewarmed > 0 ? `${prewarmed} consumer environments prewarmed, ` : ''}` +
      `${sum((runtime) => runtime.coldStarts)} cold starts` +
      `${slowestInit > 0 ? `, slowest init ${seconds(slowestInit)}` : ''}` +
      `, slowest invocation ${seconds(slowest)}${limit}, ` +
      `${sum((runtime) => runtime.timeouts)} timeouts, ${sum((runtime) => runtime.visibilityOverruns)} visibility overruns`,
  ];
}

/**
 * `npm run redrive -- --run <runId>`: the redrive of a run that has ended (docs/redrive.md), on any
 * environment that still holds its queues and ledger — a deployed stack in practice. The run's
 * modes come from its manifest; the verifier says what the run looks like now, then the
 * experiment's own redrive (redriveAndVerifyAgain) moves each non-empty DLQ back, drains and
 * verifies again.
 */

import { RunNotFoundError } from '../../contract/errors.js';
import type { Mode } from '../../contract/topology.js';
import { readManifestSummary } from '../../verifier/manifest.js';
import type { ModeOutcome } from '../../verifier/outcome.js';
import type { EnvironmentDescription, ExperimentEnvironment } from '../environments/environment.js';
import { NO_FAULTS } from '../local-aws/faults/faults.js';
import { type ExperimentProgress, type ExperimentReport, redriveAndVerifyAgain } from './experiment.js';
import type { ModeRedrive } from './redrive.js';

/** A mode of the run: the verifier's outcome after the redrive, and what it did (the outcome before it included). */
export interface RedriveRunMode extends ModeOutcome {
  readonly redrive?: ModeRedrive;
}

/** What `npm run redrive` writes to reports/<runId>-redrive.json. */
export interface RedriveRunReport {
  readonly runId: string;
  readonly target: string;
  /** When the redrive started (ISO 8601). */
  readonly startedAt: string;
  readonly environment: EnvironmentDescription;
  /** Each mode after the redrive (what the first table shows), with its `redrive`: the counts and the state before it. */
  readonly modes: Partial<Record<Mode, RedriveRunMode>>;
  readonly durationMs: number;
  /** The verification before the redrive. */
  readonly phasesMs: { readonly verify: number };
  /** Where the redrive's time went: moving the DLQs back, the drain, the verification after it. */
  readonly redrive: { readonly phasesMs: NonNullable<ExperimentReport['redrive']>['phasesMs'] };
}

/**
 * Verifies the run, redrives every non-empty DLQ of its modes, drains and verifies again. `modes`
 * narrows the run's modes; unset, every mode the run was produced to. A run the ledger does not
 * know, or a mode it was not produced to, is a RunNotFoundError before anything moves.
 */
export async function redriveFinishedRun(
  env: ExperimentEnvironment,
  input: { readonly runId: string; readonly modes?: readonly Mode[] | undefined },
  progress: ExperimentProgress,
  startedAt: number = Date.now(),
): Promise<RedriveRunReport> {
  const { runId } = input;
  const summary = await readManifestSummary({ ddb: env.ddb, tableName: env.tableName }, runId);
  if (!summary) {
    throw new RunNotFoundError(
      `no run ${runId} in the ledger ${env.tableName} (${env.description.target}): ` +
        'was it run against this stack, and is it still in the ledger?',
    );
  }
  // Unasked, the run's modes that the environment still has (a stack narrowed since has fewer).
  const modes = input.modes ?? summary.modes.filter((mode) => env.modes.includes(mode));
  const missing = modes.filter((mode) => !summary.modes.includes(mode));
  if (missing.length > 0) {
    throw new RunNotFoundError(
      `run ${runId} was not produced to ${missing.join(', ')} (produced to: ${summary.modes.join(', ') || 'none'})`,
    );
  }

  progress.phase(`verifying run ${runId} as it stands (${modes.join(', ')})`);
  const verifyStart = Date.now();
  const verification = await env.invokeVerifier(runId, modes);
  const verifyMs = Date.now() - verifyStart;
  // Each mode as it stands; the redrive replaces it with the state after it (redrive.firstDrain: this).
  const outcomes: Partial<Record<Mode, RedriveRunMode>> = {};
  for (const mode of modes) {
    const outcome = verification.result.modes[mode];
    if (!outcome) throw new Error(`the verifier returned no outcome for ${mode}`);
    const { events: _events, ...counts } = outcome;
    outcomes[mode] = counts;
  }

  const { section } = await redriveAndVerifyAgain(env, { modes, faults: NO_FAULTS }, runId, progress, {
    afterSeconds: 0,
    firstDrainEndedAt: Date.now(),
    outageEndsAt: undefined,
    modes: outcomes,
    // No page is drawn for a finished run, and its report has no manifest to align the detail with.
    events: false,
  });
  return {
    runId,
    target: env.description.target,
    startedAt: new Date(startedAt).toISOString(),
    environment: env.description,
    modes: outcomes,
    durationMs: Date.now() - startedAt,
    phasesMs: { verify: verifyMs },
    redrive: { phasesMs: section.phasesMs },
  };
}

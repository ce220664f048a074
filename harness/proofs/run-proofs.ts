/**
 * `npm run proofs`: one message per mode, its first delivery killed (SIGKILL) at the mode's crash
 * point by a deterministic selector, drained with a fresh execution environment, counted from the
 * ledger by the verifier. Each verdict is computed from those counts; one that does not hold says
 * NOT PROVED and the command exits 1.
 */
import { startEmbeddedEnvironment } from '../environments/embedded.js';
import { newRunId, runExperiment } from '../experiment/experiment.js';
import { NO_FAULTS } from '../faults/faults.js';
import type { ParsedOptions } from '../options/parse.js';
import { runEntryPoint } from '../options/run.js';
import { PROOF_MODES, PROOFS, type ProofMode } from './proofs.js';

/** Short, so the killed delivery comes back quickly; the run proves no invocation outlives it. */
const VISIBILITY_TIMEOUT_SECONDS = 6;

async function main({ values }: ParsedOptions<'proofs'>): Promise<number> {
  const target = values['crash-at'];
  // Every mode has a proof (PROOFS is a Record<Mode, …>); in topology order, as --modes gives them.
  const proofModes: ProofMode[] = PROOF_MODES.filter((mode) => values.modes.includes(mode));
  const event = target.slice(0, target.lastIndexOf('@'));

  const env = await startEmbeddedEnvironment({
    modes: proofModes,
    crashRate: 0,
    crashSeed: 'proofs',
    crashAt: [target],
    visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS,
    onStatus: (message) => process.stderr.write(`• ${message}\n`),
  });
  try {
    process.stderr.write(`• one message per mode; killing delivery ${target} at each mode's crash point\n`);
    const report = await runExperiment(
      env,
      {
        messages: 1,
        accounts: 1,
        crashRate: 0,
        batchSize: undefined,
        seed: 'proofs',
        modes: proofModes,
        concurrency: undefined,
        visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS,
        faults: NO_FAULTS,
      },
      newRunId('proofs'),
      { phase: (message) => process.stderr.write(`• ${message}\n`) },
    );
    let allProved = true;
    for (const mode of proofModes) {
      const outcome = report.modes[mode];
      if (!outcome) throw new Error(`the verifier returned no outcome for ${mode}`);
      const overruns = outcome.runtime?.visibilityOverruns ?? 0;
      const verdict =
        overruns > 0
          ? {
              proved: false,
              text: `NOT PROVED ${mode}: an invocation outlived the visibility timeout (${overruns})`,
            }
          : PROOFS[mode as ProofMode](event, outcome);
      allProved &&= verdict.proved;
      process.stdout.write(`${verdict.text}\n`);
    }
    return allProved ? 0 : 1;
  } finally {
    await env.stop();
  }
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(130));

runEntryPoint('proofs', main);

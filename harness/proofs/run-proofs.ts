/**
 * `npm run proofs`: one message per mode, its first delivery killed (SIGKILL) at the mode's crash
 * point by a deterministic selector, drained with a fresh execution environment, counted from the
 * ledger by the verifier. Each verdict is computed from those counts; one that does not hold says
 * NOT PROVED and the command exits 1.
 */
import { parseArgs } from 'node:util';
import { isMode } from '../../contract/topology.js';
import { crashTarget } from '../../functions/shared/crash.js';
import { startEmbeddedEnvironment } from '../environments/embedded.js';
import { newRunId, runExperiment } from '../experiment/experiment.js';
import { NO_FAULTS } from '../faults/faults.js';
import { PROOF_MODES, PROOFS, type ProofMode } from './proofs.js';

const USAGE = `Usage: npm run proofs -- [--crash-at EVENT@RECEIVE] [--modes a,b]

Kills the real handler process at each mode's crash point for one chosen delivery of a
single message, drains, and prints a verdict per mode computed from the ledger.
  --crash-at E@N   the delivery to kill (default evt-000000@1: the first delivery of the
                   only event); a delivery that never happens makes every verdict NOT PROVED
  --modes a,b      ${PROOF_MODES.join(', ')} (default: all)
Exit codes: 0 every verdict PROVED, 1 one was not (or the run failed), 2 invalid options.`;

/** Short, so the killed delivery comes back quickly; the run proves no invocation outlives it. */
const VISIBILITY_TIMEOUT_SECONDS = 6;

// Node 20 is what these machines run; the SDK's notice about its future Node 22 floor is known.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<number> {
  let values: { 'crash-at'?: string; modes?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        'crash-at': { type: 'string' },
        modes: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const target = values['crash-at'] ?? crashTarget('evt-000000', 1);
  if (!/^[A-Za-z0-9._:-]{1,128}@[1-9][0-9]*$/.test(target)) {
    process.stderr.write(`error: --crash-at must look like evt-000000@1, got "${target}"\n`);
    return 2;
  }
  const modes = (values.modes?.split(',').map((mode) => mode.trim()) ?? PROOF_MODES).filter(Boolean);
  const unknown = modes.filter((mode) => !isMode(mode) || !(PROOF_MODES as string[]).includes(mode));
  if (modes.length === 0 || unknown.length > 0) {
    process.stderr.write(`error: --modes takes ${PROOF_MODES.join(', ')}; unknown: ${unknown.join(', ')}\n`);
    return 2;
  }
  const proofModes = PROOF_MODES.filter((mode) => modes.includes(mode));
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

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

/**
 * `npm run redrive -- --run <runId>`: the last step of the runbook (docs/redrive.md) for a run that
 * has ended on a deployed stack. Verifies the run, moves each mode's non-empty DLQ back with SQS's
 * StartMessageMoveTask, drains, verifies again, prints the run after the redrive, what the redrive
 * did and the run before it, and writes reports/<runId>-redrive.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunNotFoundError } from '../../contract/errors.js';
import { MODE_NAMES } from '../../contract/topology.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { connectDeployedEnvironment } from '../environments/deployed.js';
import { DeployedEnvironmentError } from '../environments/deployed-errors.js';
import type { ParsedOptions } from '../options/parse.js';
import { type Outcome, runEntryPoint } from '../options/run.js';
import { UsageError } from '../options/usage-error.js';
import { createProgress } from '../report/progress.js';
import { formatRedriveRun } from '../report/redrive-tables.js';
import { redriveFinishedRun } from '../run/redrive-run.js';

async function main({ values }: ParsedOptions<'redrive'>): Promise<Outcome> {
  const target = values.target;
  if (target === 'embedded') {
    throw new UsageError(
      'an embedded run cannot be redriven after it ended: its queues, DLQs and ledger lived in emulators ' +
        'that stopped with it. Redrive within the run instead: `npm run experiment -- --redrive`',
    );
  }
  const progress = createProgress(process.stderr);
  const env = await connectDeployedEnvironment({
    target,
    stackName: values.stack,
    modes: values.modes ?? MODE_NAMES,
    // Without --modes, every mode the stack deploys.
    modesFromStack: values.modes === undefined,
    ...(values.region !== undefined ? { region: values.region } : {}),
    ...(values.endpoint !== undefined ? { endpoint: values.endpoint } : {}),
    onStatus: (message) => progress.phase(message),
  });
  try {
    const report = await redriveFinishedRun(env, { runId: values.run, modes: values.modes }, progress);
    progress.done();
    const reportsDir = join(PROJECT_ROOT, 'reports');
    mkdirSync(reportsDir, { recursive: true });
    const reportPath = join(reportsDir, `${report.runId}-redrive.json`);
    const json = JSON.stringify(report, null, 2);
    writeFileSync(reportPath, `${json}\n`);
    if (values.json) {
      process.stdout.write(`${json}\n`);
      return 0;
    }
    process.stdout.write(`${formatRedriveRun(report, values.stack)}\n`);
    return { report: reportPath };
  } finally {
    progress.done();
    await env.stop();
  }
}

// A move task, once started, goes on in SQS whatever happens here: a signal only stops the waiting.
const SIGNAL_EXIT_CODES = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
for (const [signal, code] of Object.entries(SIGNAL_EXIT_CODES))
  process.once(signal, () => process.exit(code));

runEntryPoint('redrive', main, { explained: [DeployedEnvironmentError, RunNotFoundError] });

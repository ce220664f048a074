/**
 * `npm run experiment`: start an environment, run the experiment, print the table (or JSON),
 * write reports/<runId>.json, and stop everything it started — on success, on error, on Ctrl-C.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fifoBatchSizeNote } from '../../contract/deployment-settings.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { connectDeployedEnvironment } from '../environments/deployed.js';
import { DeployedEnvironmentError } from '../environments/deployed-errors.js';
import { startEmbeddedEnvironment } from '../environments/embedded.js';
import type { ExperimentEnvironment } from '../environments/environment.js';
import { JavaMissingError } from '../local-aws/emulators/index.js';
import { outageWarning } from '../local-aws/faults/outage.js';
import type { ParsedOptions } from '../options/parse.js';
import { runEntryPoint } from '../options/run.js';
import { openInBrowser, writeRunReport } from '../report/html/write.js';
import { createProgress } from '../report/progress.js';
import { formatSummary } from '../report/terminal.js';
import { newRunId, runExperiment } from '../run/experiment.js';
import { describeSettings, reconcileWithEnvironment } from '../run/reconcile.js';
import { replayCommand } from '../run/replay-command.js';
import { type CliOptions, cliOptionsOf } from './cli-args.js';

let environment: ExperimentEnvironment | undefined;
/** Set while the environment starts, so a Ctrl-C then still stops what was started. */
let starting: Promise<ExperimentEnvironment> | undefined;
let stopping = false;

async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping) {
    // A second Ctrl-C: no graceful stop. The exit hooks of the emulator and of the execution
    // environments SIGKILL their processes, so nothing outlives the harness.
    process.exit(exitCode(signal));
  }
  stopping = true;
  process.stderr.write(`\n${signal}: stopping the emulators and function processes… (again to force)\n`);
  const started = environment ?? (await starting?.catch(() => undefined));
  await started?.stop().catch(() => undefined);
  process.exit(exitCode(signal));
}

/** 128 + the signal's number, as shells report it. */
function exitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143;
}

async function main(parsed: ParsedOptions<'experiment'>): Promise<number> {
  const options = cliOptionsOf(parsed);
  // SIGHUP: the terminal went away; clean up as for Ctrl-C.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, (s) => void shutdown(s));
  // `npm run` and tsx each add a process above this one; if one of them is SIGKILLed, this process
  // is reparented and nobody would ever stop it: treat that as the terminal going away.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown('SIGHUP');
  }, 500).unref();

  const startedAt = Date.now();
  const { config } = options;
  const runId = newRunId(config.seed);
  const reportsDir = join(PROJECT_ROOT, 'reports');
  const progress = createProgress(process.stderr);

  try {
    starting = startEnvironment(options, join(reportsDir, `${runId}.logs`), (message) =>
      progress.phase(message),
    );
    environment = await starting;
    // Interrupted while starting: shutdown() is stopping it; do not start producing.
    if (stopping) return 130;
    const effective = {
      ...reconcileWithEnvironment(
        config,
        options.explicit,
        environment.description,
        environment.redeployCommand,
      ),
      // A deployed redrive without --modes: the stack's own.
      modes: environment.modes,
    };
    progress.phase(describeSettings(environment.description, effective.modes));
    const outage = outageWarning(effective.faults, effective.modes, environment.description.modes);
    if (outage) process.stderr.write(`${outage}\n`);
    const fifoClamp = fifoBatchSizeNote(
      effective.modes,
      options.explicit.has('batch-size') ? config.batchSize : undefined,
    );
    if (fifoClamp) process.stderr.write(`note: ${fifoClamp}\n`);
    const report = await runExperiment(environment, effective, runId, progress, startedAt);
    progress.done();

    mkdirSync(reportsDir, { recursive: true });
    const reportPath = join(reportsDir, `${runId}.json`);
    const json = JSON.stringify(report, null, 2);
    writeFileSync(reportPath, `${json}\n`);
    // The JSON is on disk already: a page that cannot be built is a warning, not a failed run.
    const htmlPath = await writeRunReport(report, {
      reportJsonPath: reportPath,
      replayCommand: replayCommand(effective, options.target),
    }).catch((error: unknown) => {
      process.stderr.write(
        `warning: no HTML report: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return undefined;
    });
    if (options.json) process.stdout.write(`${json}\n`);
    else
      process.stdout.write(
        `${formatSummary(
          report,
          relative(process.cwd(), reportPath),
          htmlPath && relative(process.cwd(), htmlPath),
          // A terminal's width folds the result table to fit; a pipe or a file gets it whole.
          process.stdout.isTTY ? process.stdout.columns : undefined,
        )}\n`,
      );
    if (htmlPath && options.open) await openInBrowser(htmlPath);
    return 0;
  } catch (error) {
    progress.done();
    // While a signal stops the environment, the run fails on purpose: nothing to report.
    if (stopping) return 1;
    throw error;
  } finally {
    if (!stopping)
      await environment?.stop().catch((error: unknown) => {
        process.stderr.write(
          `warning: cleanup incomplete: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      });
  }
}

function startEnvironment(
  options: CliOptions,
  logDir: string,
  onStatus: (message: string) => void,
): Promise<ExperimentEnvironment> {
  const { config } = options;
  if (options.target === 'embedded') {
    return startEmbeddedEnvironment({
      modes: config.modes,
      crashRate: config.crashRate,
      crashSeed: config.seed,
      ...(config.batchSize !== undefined ? { batchSize: config.batchSize } : {}),
      ...(config.concurrency !== undefined ? { concurrency: config.concurrency } : {}),
      visibilityTimeoutSeconds: config.visibilityTimeoutSeconds,
      ...(config.maxReceiveCount !== undefined ? { maxReceiveCount: config.maxReceiveCount } : {}),
      faults: config.faults,
      ...(config.markerTtlSeconds !== undefined ? { markerTtlSeconds: config.markerTtlSeconds } : {}),
      ...(config.ageGuard !== undefined ? { ageGuard: config.ageGuard } : {}),
      prewarm: !options.coldStarts,
      logDir,
      onStatus,
    });
  }
  return connectDeployedEnvironment({
    target: options.target,
    stackName: options.stackName,
    modes: config.modes,
    // Without --modes, the default modes (every mode for a redrive) that the stack deploys: a
    // stack deployed with `-c modes=…` runs as it is. An explicit --modes it lacks is refused.
    modesFromStack: !options.explicit.has('modes'),
    ...(options.region !== undefined ? { region: options.region } : {}),
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    onStatus,
  });
}

// Java missing, a stack not deployed or unreachable: the message says what to do, no class name.
runEntryPoint('experiment', main, {
  explained: [JavaMissingError, DeployedEnvironmentError],
  // A signal is stopping the environment: shutdown() exits when it is done.
  keepAlive: () => stopping,
});

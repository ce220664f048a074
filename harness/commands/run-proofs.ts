/**
 * `npm run proofs`: one message per mode, its first delivery killed (SIGKILL) at the mode's crash
 * point by a deterministic selector, drained with a fresh execution environment, counted from the
 * ledger by the verifier. Then, in the same environment, the redrive proof: one message to each mode
 * that has one, killed at the same delivery, which is now the last one SQS allows, so the applied
 * event is dead-lettered; the DLQ is redriven, drained and verified again. Each verdict is computed
 * from those counts; one that does not hold says NOT PROVED and the command exits 1.
 */
import { GetQueueAttributesCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Mode } from '../../contract/topology.js';
import { startEmbeddedEnvironment } from '../environments/embedded.js';
import type { ExperimentEnvironment } from '../environments/environment.js';
import { NO_FAULTS } from '../local-aws/faults/faults.js';
import type { ParsedOptions } from '../options/parse.js';
import { runEntryPoint } from '../options/run.js';
import { type ExperimentConfig, newRunId, runExperiment } from '../run/experiment.js';
import { relayCrashes } from '../run/outbox/crash-draws.js';
import {
  PROOF_MODES,
  PROOFS,
  type ProducerProof,
  type ProofMode,
  producerProofVerdict,
  REDRIVE_PROOF_MODES,
  redriveProofVerdict,
  type Verdict,
} from '../studies/proofs/proofs.js';

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
  const phase = { phase: (message: string) => process.stderr.write(`• ${message}\n`) };
  let allProved = true;
  const print = (verdict: Verdict) => {
    allProved &&= verdict.proved;
    process.stdout.write(`${verdict.text}\n`);
  };
  const config: ExperimentConfig = {
    messages: 1,
    accounts: 1,
    crashRate: 0,
    batchSize: undefined,
    seed: 'proofs',
    modes: proofModes,
    concurrency: undefined,
    visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS,
    faults: NO_FAULTS,
  };
  try {
    process.stderr.write(`• one message per mode; killing delivery ${target} at each mode's crash point\n`);
    const report = await runExperiment(env, config, newRunId('proofs'), phase);

    for (const mode of proofModes) {
      const outcome = report.modes[mode];
      if (!outcome) throw new Error(`the verifier returned no outcome for ${mode}`);
      print(overrun(mode, outcome.runtime?.visibilityOverruns) ?? PROOFS[mode as ProofMode](event, outcome));
    }

    const redriveModes = REDRIVE_PROOF_MODES.filter((mode) => proofModes.includes(mode));
    if (redriveModes.length > 0) await proveRedrives(env, config, redriveModes, target, event, print, phase);
  } finally {
    await env.stop();
  }
  // The producer proofs kill the producer or its relay, not the consumer: an environment of their
  // own, without the consumers' crash target.
  if (proofModes.includes('effectively-once')) {
    const producerEnv = await startEmbeddedEnvironment({
      modes: ['effectively-once'],
      crashRate: 0,
      crashSeed: 'proofs',
      visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS,
      onStatus: (message) => process.stderr.write(`• ${message}\n`),
    });
    try {
      for (const producer of ['dual-write', 'outbox'] as const) {
        print(await proveProducer(producerEnv, config, producer, phase));
      }
    } finally {
      await producerEnv.stop();
    }
  }
  return allProved ? 0 : 1;
}

async function proveRedrives(
  env: ExperimentEnvironment,
  config: ExperimentConfig,
  redriveModes: readonly Mode[],
  target: string,
  event: string,
  print: (verdict: Verdict) => void,
  phase: { phase(message: string): void },
): Promise<void> {
  // The killed delivery becomes the last one SQS allows: the applied event is dead-lettered.
  const lastReceive = Number(target.slice(target.lastIndexOf('@') + 1));
  await setMaxReceiveCount(env, redriveModes, lastReceive);
  process.stderr.write(
    `• the redrive proof: one message to each of ${redriveModes.join(', ')}; max receive count ${lastReceive}, ` +
      `so delivery ${target} is the last one SQS allows; then the DLQs are redriven\n`,
  );
  const redriven = await runExperiment(
    env,
    { ...config, modes: redriveModes, maxReceiveCount: lastReceive, redrive: { afterSeconds: 0 } },
    newRunId('proofs-redrive'),
    phase,
  );
  for (const mode of redriveModes) {
    const outcome = redriven.modes[mode];
    if (!outcome) throw new Error(`the verifier returned no outcome for ${mode}`);
    print(
      overrun(`${mode} after a redrive`, outcome.runtime?.visibilityOverruns) ??
        redriveProofVerdict(mode, event, outcome),
    );
  }
}

/**
 * One event through a dual-writing producer killed between its commit and its send, or through the
 * outbox with its relay killed between its send and its checkpoint, into effectively-once. The kills
 * are the experiment's own seeded draws: at rate 1 a dual-writing producer dies after its one
 * commit; the relay needs a seed whose first relay dies and whose restarted one does not
 * (relayCrashes draws per relay process), found below rather than special-cased in the relay.
 */
async function proveProducer(
  env: ExperimentEnvironment,
  config: ExperimentConfig,
  producer: ProducerProof,
  phase: { phase(message: string): void },
): Promise<Verdict> {
  const event = 'evt-000000';
  const seed = producer === 'dual-write' ? 'proofs' : relayProofSeed(event);
  const faults =
    producer === 'dual-write'
      ? { ...NO_FAULTS, producerCrashRate: 1 }
      : { ...NO_FAULTS, relayCrashRate: RELAY_PROOF_RATE };
  process.stderr.write(
    producer === 'dual-write'
      ? `• the dual-write proof: one event, its producer killed after the commit, before the send\n`
      : `• the outbox proof: one event, its relay killed after the send, before the checkpoint\n`,
  );
  const report = await runExperiment(
    env,
    { ...config, seed, modes: ['effectively-once'], producer, faults },
    newRunId(`proofs-${producer}`),
    phase,
  );
  const outcome = report.modes['effectively-once'];
  if (!outcome || !report.producer) throw new Error(`the ${producer} proof returned no outcome`);
  return producerProofVerdict(producer, event, report.producer, outcome);
}

const RELAY_PROOF_RATE = 0.5;

/** The first seed under which the first relay dies after sending the event and the second does not. */
export function relayProofSeed(event: string): string {
  for (let n = 0; ; n += 1) {
    const seed = `proofs-outbox-${n}`;
    if (relayCrashes(RELAY_PROOF_RATE, seed, event, 0) && !relayCrashes(RELAY_PROOF_RATE, seed, event, 1))
      return seed;
  }
}

/** An invocation that outlived its visibility timeout voids a proof: SQS may have delivered twice. */
function overrun(name: string, overruns = 0): Verdict | undefined {
  return overruns > 0
    ? {
        proved: false,
        text: `NOT PROVED ${name}: an invocation outlived the visibility timeout (${overruns})`,
      }
    : undefined;
}

/**
 * Lowers the max receive count of the modes' source queues (their redrive policy, as an operator
 * would with SetQueueAttributes): the environment keeps running, so the redrive proof needs no
 * second start.
 */
async function setMaxReceiveCount(
  env: ExperimentEnvironment,
  modes: readonly Mode[],
  maxReceiveCount: number,
): Promise<void> {
  for (const mode of modes) {
    const QueueUrl = env.queueUrl(mode);
    const { Attributes } = await env.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['RedrivePolicy'] }),
    );
    const policy = JSON.parse(Attributes?.RedrivePolicy ?? 'null') as Record<string, unknown> | null;
    if (!policy) throw new Error(`${mode}'s queue has no redrive policy`);
    await env.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl,
        Attributes: { RedrivePolicy: JSON.stringify({ ...policy, maxReceiveCount }) },
      }),
    );
  }
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(130));

runEntryPoint('proofs', main);

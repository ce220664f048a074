// The verifier Lambda: its input, the run's modes verified side by side (mode-verification.ts), one response.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import * as v from 'valibot';
import { requireEnv } from '../contract/config.js';
import { ConfigError, InvalidInputError, RunNotFoundError } from '../contract/errors.js';
import { createLogger } from '../contract/logger.js';
import { IdentifierSchema } from '../contract/message.js';
import { MODE_NAMES, type Mode } from '../contract/topology.js';
import { listCharges } from '../services/payment-provider/charge-ledger.js';
import type { ChargeReader } from './charge-outcome.js';
import { MAX_DETAILED_EVENTS, type ManifestDetails, type ModeEventDetails } from './event-details.js';
import { type ManifestSummary, readManifestSummary } from './manifest.js';
import { type VerifierDeps, verifyModeInDetail } from './mode-verification.js';
import type { ModeOutcome } from './outcome.js';

export const VerifierInputSchema = v.strictObject({
  runId: IdentifierSchema,
  /** Which modes to verify; all of the topology's by default. */
  modes: v.optional(v.pipe(v.array(v.picklist(MODE_NAMES)), v.minLength(1))),
  /** Also return every event's outcome (runs of at most MAX_DETAILED_EVENTS events). */
  events: v.optional(v.boolean()),
});

/** A mode's counts, and its per-event detail when it was asked for and the run is small enough. */
export interface ModeResult extends ModeOutcome {
  readonly events?: ModeEventDetails;
}

export interface VerifierResult {
  readonly runId: string;
  readonly modes: Partial<Record<Mode, ModeResult>>;
  /** The manifest in production order, once for all modes: when `events` was asked for and given. */
  readonly manifest?: ManifestDetails;
  /** Why `events` was asked for and not given (the run is too large for one response). */
  readonly eventsOmitted?: string;
}

export async function verifyRun(deps: VerifierDeps, input: unknown): Promise<VerifierResult> {
  const parsed = v.safeParse(VerifierInputSchema, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const field = v.getDotPath(issue) ?? '(input)';
    throw new InvalidInputError(
      `verifier input ${field}: ${issue.message}; expected { "runId": "...", "modes"?: [...], "events"?: true }`,
    );
  }
  const { runId } = parsed.output;
  // The stack's modes are the ones it was given a DLQ for (`-c modes`); unasked, every one of them.
  const deployed = MODE_NAMES.filter((mode) => deps.deadLetterQueueUrls[mode] !== undefined);
  const notDeployed = (parsed.output.modes ?? []).filter((mode) => !deployed.includes(mode));
  if (notDeployed.length > 0) {
    throw new InvalidInputError(
      `this stack does not deploy ${[...new Set(notDeployed)].join(', ')} (it deploys ${deployed.join(', ')}): ` +
        'redeploy it with those modes in -c modes=… (docs/deploying.md)',
    );
  }
  // Topology order, each mode once: two sweeps of one DLQ at a time would hide messages from each other.
  const modes = deployed.filter((mode) => (parsed.output.modes ?? deployed).includes(mode));
  const summary = await readManifestSummary(deps.reader, runId);
  if (summary === undefined) {
    throw new RunNotFoundError(`no manifest for run ${runId}: was the run produced against this table?`);
  }
  const notProduced = modes.filter((mode) => !summary.modes.includes(mode));
  if (notProduced.length > 0) {
    throw new RunNotFoundError(
      `run ${runId} was not produced to ${notProduced.join(', ')} (produced to: ${summary.modes.join(', ') || 'none'})`,
    );
  }
  const eventsOmitted = parsed.output.events ? omittedBecause(summary) : undefined;
  const detailed = parsed.output.events === true && eventsOmitted === undefined;
  const verifications = await Promise.all(
    modes.map(
      async (mode) => [mode, await verifyModeInDetail(deps, runId, mode, summary, detailed)] as const,
    ),
  );
  // Every mode joined the same manifest: send it once.
  const manifest = verifications[0]?.[1].detail?.manifest;
  const counts = Object.fromEntries(verifications.map(([mode, { outcome }]) => [mode, outcome]));
  const result: VerifierResult = {
    runId,
    modes: Object.fromEntries(
      verifications.map(([mode, { outcome, detail }]) => [
        mode,
        detail ? { ...outcome, events: detail.events } : outcome,
      ]),
    ),
    ...(manifest ? { manifest } : {}),
    ...(eventsOmitted !== undefined ? { eventsOmitted } : {}),
  };
  // The event count bounds the detail only roughly (receive counts and crashes grow with the max
  // receive count, unknown ids with bugs): the bytes decide, well inside Lambda's 6 MB response.
  const bytes = detailed ? Buffer.byteLength(JSON.stringify(result)) : 0;
  const maxBytes = deps.maxDetailBytes ?? MAX_DETAIL_BYTES;
  if (bytes > maxBytes) {
    return {
      runId,
      modes: counts,
      eventsOmitted: `the per-event detail is ${bytes} bytes, more than the ${maxBytes} that fit in one verifier response (a Lambda response is at most 6 MB)`,
    };
  }
  return result;
}

/** Room left for the counts and JSON framing under Lambda's 6 MB (6,291,456-byte) response limit. */
export const MAX_DETAIL_BYTES = 5 * 1024 * 1024;

/** Why a run gets counts only, or undefined when its detail fits in one response. */
function omittedBecause(summary: ManifestSummary): string | undefined {
  if (summary.produced <= MAX_DETAILED_EVENTS) return undefined;
  return `the run has ${summary.produced} events; per-event detail is returned for at most ${MAX_DETAILED_EVENTS} (a Lambda response is at most 6 MB)`;
}

/** The counts without the per-event detail: what the log line can carry. */
function countsOnly(result: VerifierResult): Partial<Record<Mode, ModeOutcome>> {
  return Object.fromEntries(
    Object.entries(result.modes).map(([mode, { events: _events, ...outcome }]) => [mode, outcome]),
  );
}

/** DEAD_LETTER_QUEUE_URLS is a JSON object with one URL per mode of the topology. */
/** The DLQ of each mode the stack deploys (at least one): the verifier verifies those modes only. */
export function parseDeadLetterQueueUrls(raw: string): Partial<Record<Mode, string>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('DEAD_LETTER_QUEUE_URLS must be a JSON object of mode → queue URL');
  }
  const result = v.safeParse(v.record(v.string(), v.pipe(v.string(), v.url())), parsed);
  if (!result.success) throw new ConfigError('DEAD_LETTER_QUEUE_URLS must map each mode to a queue URL');
  const unknown = Object.keys(result.output).filter(
    (mode) => !(MODE_NAMES as readonly string[]).includes(mode),
  );
  if (unknown.length > 0)
    throw new ConfigError(`DEAD_LETTER_QUEUE_URLS names modes the topology lacks: ${unknown.join(', ')}`);
  if (Object.keys(result.output).length === 0)
    throw new ConfigError('DEAD_LETTER_QUEUE_URLS names no mode: the stack deploys at least one');
  return result.output as Partial<Record<Mode, string>>;
}

/**
 * Unset on AWS, where only a long poll asks every SQS server and so proves a queue empty. The local
 * runtime sets 0: its emulator keeps one copy of each queue, so an empty short poll proves it too,
 * a second sooner per mode.
 */
export function sweepWaitOf(raw: string | undefined): { sweepWaitSeconds?: number } {
  if (raw === undefined) return {};
  const seconds = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(seconds) || seconds < 0 || seconds > 20) {
    throw new ConfigError(`DLQ_SWEEP_WAIT_SECONDS=${raw} must be a whole number of seconds from 0 to 20`);
  }
  return { sweepWaitSeconds: seconds };
}

const logger = createLogger('verifier');
let lambdaDeps: VerifierDeps | undefined;

/**
 * The Lambda's deps, from its environment, at its first invocation rather than at import: the
 * harness (the explorer) imports providerCharges in a process without that environment.
 */
function depsFromEnvironment(): VerifierDeps {
  if (lambdaDeps !== undefined) return lambdaDeps;
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({}));
  const providerTableName = process.env.PROVIDER_TABLE_NAME;
  lambdaDeps = {
    reader: { ddb, tableName: requireEnv('TABLE_NAME') },
    ...(providerTableName ? { charges: providerCharges(ddb, providerTableName) } : {}),
    sqs: new SQSClient({}),
    deadLetterQueueUrls: parseDeadLetterQueueUrls(requireEnv('DEAD_LETTER_QUEUE_URLS')),
    ...sweepWaitOf(process.env.DLQ_SWEEP_WAIT_SECONDS),
  };
  return lambdaDeps;
}

/** The provider's ledger of one run, one mode's charges: its stand-in for Stripe's search by metadata. */
export function providerCharges(client: DynamoDBDocumentClient, tableName: string): ChargeReader {
  return async function* (runId, mode) {
    for await (const charge of listCharges(client, tableName, runId)) if (charge.mode === mode) yield charge;
  };
}

export const handler = async (
  event: unknown,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<VerifierResult> => {
  // Hide swept DLQ messages for the rest of this invocation at least, so none comes back mid-sweep.
  const sweepVisibilitySeconds = Math.min(
    43_200,
    Math.max(30, Math.ceil(context.getRemainingTimeInMillis() / 1000)),
  );
  const result = await verifyRun(
    {
      ...depsFromEnvironment(),
      sweepVisibilitySeconds,
      warn: (message, details) => logger.warn(message, details),
    },
    event,
  );
  // Counts only: the per-event detail can be megabytes, too much for a log line.
  logger.info('verified', { runId: result.runId, modes: countsOnly(result) });
  return result;
};

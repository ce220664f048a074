import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import * as v from 'valibot';
import { requireEnv } from '../contract/config.js';
import { ConfigError, InvalidInputError, RunNotFoundError } from '../contract/errors.js';
import { appliedOnBalanceAttribute, parseAppliedOnBalance, SK } from '../contract/ledger-keys.js';
import { createLogger } from '../contract/logger.js';
import { accountOfFifoGroup, IdentifierSchema } from '../contract/message.js';
import {
  chargeOf,
  evidenceOf,
  isFifoMode,
  MODE_NAMES,
  MODES,
  type Mode,
  type ModeSettings,
} from '../contract/topology.js';
import { listCharges } from '../services/payment-provider/charges.js';
import { type ChargeReader, ChargeTally } from './charge-outcome.js';
import { countMessages, type DeadLetterSweep, sweepDeadLetters } from './dead-letters.js';
import {
  collectEventDetails,
  type EventDetailsCollector,
  MAX_DETAILED_EVENTS,
  type ManifestDetails,
  type ModeEventDetails,
} from './event-details.js';
import {
  countRefusals,
  type LedgerReader,
  numberAttribute,
  queryPrefix,
  readBalances,
  readCounters,
  readCrashes,
  timeAttribute,
} from './ledger-reader.js';
import { type ManifestSummary, readManifestEvents, readManifestSummary } from './manifest.js';
import {
  type ApplicationRecord,
  type FifoDeadLetters,
  groupApplications,
  joinByEventId,
  type ModeOutcome,
} from './outcome.js';

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

export interface VerifierDeps {
  readonly reader: LedgerReader;
  /** How long the DLQ sweep may hide a message: longer than the verification can last. */
  readonly sweepVisibilitySeconds?: number;
  /** The DLQ sweep's receive wait; an empty answer ends the sweep. @default 1 (a long poll) */
  readonly sweepWaitSeconds?: number;
  readonly warn?: (message: string, details: Record<string, unknown>) => void;
  readonly sqs: SQSClient;
  /** Dead-letter queue URL per mode. */
  /** Per deployed mode (the stack's `-c modes`): the modes without one are not deployed. */
  readonly deadLetterQueueUrls: Readonly<Partial<Record<Mode, string>>>;
  /** Largest response with per-event detail, in bytes. @default MAX_DETAIL_BYTES */
  readonly maxDetailBytes?: number;
  /** The payment provider's ledger, for the charge modes. @default none: a charge mode cannot be verified */
  readonly charges?: ChargeReader;
}

/**
 * Counts one mode of one run by event id: the manifest, the application records and the
 * dead-lettered ids are joined as streams in event-id order (DLQ ids sorted after the sweep).
 */
export async function verifyMode(
  deps: VerifierDeps,
  runId: string,
  mode: Mode,
  summary: ManifestSummary,
): Promise<ModeOutcome> {
  return (await verifyModeInDetail(deps, runId, mode, summary, false)).outcome;
}

interface ModeVerification {
  readonly outcome: ModeOutcome;
  readonly detail?: ReturnType<EventDetailsCollector['finish']>;
}

/** The mode's DLQ; verifyRun asks only for deployed modes. */
function deadLetterQueueOf(deps: VerifierDeps, mode: Mode): string {
  const url = deps.deadLetterQueueUrls[mode];
  if (url === undefined)
    throw new InvalidInputError(`this stack does not deploy ${mode}: it has no DLQ for it`);
  return url;
}

/** verifyMode, and with `detailed` the same join also fills every event's outcome. */
async function verifyModeInDetail(
  deps: VerifierDeps,
  runId: string,
  mode: Mode,
  summary: ManifestSummary,
  detailed: boolean,
): Promise<ModeVerification> {
  const sweep = await sweepDeadLetters(deps.sqs, deadLetterQueueOf(deps, mode), runId, {
    visibilitySeconds: deps.sweepVisibilitySeconds ?? 300,
    ...(deps.sweepWaitSeconds !== undefined ? { waitTimeSeconds: deps.sweepWaitSeconds } : {}),
  });
  if (sweep.notReleased > 0) {
    deps.warn?.(
      'some dead-lettered messages were not made visible again; they reappear after the sweep timeout',
      {
        mode,
        notReleased: sweep.notReleased,
      },
    );
  }
  const fifo = isFifoMode(mode);
  // Counted right after the sweep: what the DLQ holds beyond what the sweep saw.
  const fifoDeadLetters = fifo ? await fifoDeadLettersOf(deps, mode, runId, sweep) : undefined;
  const balance = (MODES[mode] as ModeSettings).balance ?? 'sum';
  // A state mode's records also carry each event's state: the balance they imply is the newest's.
  const states = balance === 'state' ? new LatestStates() : undefined;
  // A one-write mode's applications ride on its balance items: both read in one pass.
  const onBalances =
    evidenceOf(mode) === 'balance'
      ? await readBalancesWithApplications(deps.reader, runId, mode, detailed)
      : undefined;
  const applications = groupApplications(
    onBalances
      ? inOrder(onBalances.applications)
      : readApplications(deps.reader, runId, mode, detailed, states, chargeOf(mode) !== undefined),
  );
  const deadLettered = [...sweep.events].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const chargeTally = chargeOf(mode) ? await readChargeTally(deps, runId, mode) : undefined;
  // Crashes are few (one item per injected crash): read them whole before the join.
  const collector = detailed
    ? collectEventDetails(
        await readCrashes(deps.reader, runId, mode),
        chargeTally?.chargesOf.bind(chargeTally),
      )
    : undefined;
  const sink = bothSinks(collector?.sink, chargeTally?.sink);
  const derived = balance === 'entries';
  const [counts, counters, balances, tooOldToDedupe] = await Promise.all([
    joinByEventId(readManifestEvents(deps.reader, runId), applications, deadLettered, sink, {
      keepOutOfOrderIds: detailed,
      ...(fifoDeadLetters ? { fifoDeadLetters } : {}),
    }),
    readCounters(deps.reader, runId, mode),
    derived || onBalances
      ? Promise.resolve({ cents: onBalances?.cents ?? 0 })
      : readBalances(deps.reader, runId, mode),
    countRefusals(deps.reader, runId, mode),
  ]);
  if (counts.unseenBeyondCapacity > 0) {
    deps.warn?.(
      'events that could be behind a group in the FIFO DLQ are more than it holds: counted as lost',
      {
        mode,
        lost: counts.unseenBeyondCapacity,
      },
    );
  }
  // A mode without balance items reads a balance as its entries' sum, which the join has added up.
  const actualCents = derived ? counts.ledgerCents : balances.cents;
  // A state mode's balance is a state, not a sum: the ledger's is the newest recorded state per account.
  const ledgerCents = states ? states.totalCents() : counts.ledgerCents;
  const outcome: ModeOutcome = {
    produced: summary.produced,
    poison: summary.poison,
    producerDuplicates: summary.producerDuplicates,
    deliveries: counters.deliveries,
    appliedOnce: counts.appliedOnce,
    duplicated: counts.duplicated,
    extraApplications: counts.extraApplications,
    deadLettered: counts.deadLettered,
    deadLetteredCents: counts.deadLetteredCents,
    lost: counts.lost,
    unexpected: counts.unexpected,
    payloadMismatches: counts.payloadMismatches,
    conflictingReuse: counts.conflictingReuse,
    expectedCents: summary.expectedCents,
    actualCents,
    driftCents: actualCents - summary.expectedCents,
    ledgerCents,
    consistent: ledgerCents === actualCents,
    crashes: counters.crashes,
    suppressedDuplicates: counters.suppressedDuplicates,
    retriedCancellations: counters.retriedCancellations,
    appliedAndDeadLettered: counts.appliedAndDeadLettered,
    deadLetteredUnreadable: sweep.unreadable,
    tooOldToDedupe,
    orderViolations: counts.orderViolations,
    ...(fifo ? { deadLetteredUnseen: counts.deadLetteredUnseen } : {}),
    ...(states ? { superseded: counters.superseded } : {}),
    ...(chargeTally
      ? { ...chargeTally.finish(), providerResponsesLost: counters.providerResponsesLost }
      : {}),
  };
  return collector ? { outcome, detail: collector.finish(counts.outOfOrderEventIds) } : { outcome };
}

/**
 * A FIFO DLQ beyond its sweep: per account of the run whose group heads it, the last event the
 * sweep saw there (the groups are the producer's, fifoIdsOf), and how many messages it holds that
 * the sweep did not see. SQS's counts are exact on the emulator and approximate on AWS.
 */
async function fifoDeadLettersOf(
  deps: VerifierDeps,
  mode: Mode,
  runId: string,
  sweep: DeadLetterSweep,
): Promise<FifoDeadLetters> {
  const lastSeenOfAccount = new Map<string, string>();
  for (const [group, eventId] of sweep.lastEventOfGroup) {
    const account = accountOfFifoGroup(runId, group);
    if (account !== undefined) lastSeenOfAccount.set(account, eventId);
  }
  if (lastSeenOfAccount.size === 0) return { lastSeenOfAccount, unseenMessages: 0 };
  const held = await countMessages(deps.sqs, deadLetterQueueOf(deps, mode));
  return { lastSeenOfAccount, unseenMessages: held - sweep.seen };
}

async function readChargeTally(deps: VerifierDeps, runId: string, mode: Mode): Promise<ChargeTally> {
  if (deps.charges === undefined) {
    throw new ConfigError(
      `${mode} charges at the payment provider, but the verifier was not told where its ledger is (PROVIDER_TABLE_NAME)`,
    );
  }
  return ChargeTally.read(deps.charges, runId, mode);
}

function bothSinks<E>(
  first: ((event: E) => void) | undefined,
  second: ((event: E) => void) | undefined,
): ((event: E) => void) | undefined {
  if (first === undefined || second === undefined) return first ?? second;
  return (event) => {
    first(event);
    second(event);
  };
}

/** The mode's application records in key order; receive count and time only when detail is wanted. */
async function* readApplications(
  reader: LedgerReader,
  runId: string,
  mode: Mode,
  detailed: boolean,
  states?: LatestStates,
  /** A charge mode's records name the provider's charge: joined against its ledger. */
  charges = false,
): AsyncGenerator<ApplicationRecord> {
  // The application time always: the order of applications is counted by every verification.
  const projection = ['eventId', 'accountId', 'amountCents', 'applications', 'appliedAt'];
  if (detailed) projection.push('receiveCount');
  if (states) projection.push('seq', 'balanceAfterCents');
  if (charges) projection.push('chargeId');
  for await (const item of queryPrefix(reader, runId, mode, SK.applicationPrefix, projection)) {
    states?.add(
      String(item.accountId),
      numberAttribute(item, 'seq'),
      numberAttribute(item, 'balanceAfterCents'),
    );
    yield {
      eventId: String(item.eventId),
      accountId: String(item.accountId),
      amountCents: numberAttribute(item, 'amountCents'),
      applications: numberAttribute(item, 'applications'),
      // Required for per-event detail; a count-only verification orders what has a time.
      ...(detailed || item.appliedAt !== undefined ? { appliedAtMs: timeAttribute(item, 'appliedAt') } : {}),
      ...(detailed ? { receiveCount: numberAttribute(item, 'receiveCount') } : {}),
      ...(charges && typeof item.chargeId === 'string' ? { chargeId: item.chargeId } : {}),
    };
  }
}

/**
 * A one-write mode's balance items, whole: their balances, and the applications they carry
 * (appliedOnBalanceAttribute), one record each, in event-id order as the join needs them. Held in
 * memory and sorted: a few dozen bytes per application, so a million-event run of these modes
 * needs tens of MB (the experiment refuses runs whose balance items would outgrow 400 KB).
 */
async function readBalancesWithApplications(
  reader: LedgerReader,
  runId: string,
  mode: Mode,
  detailed: boolean,
): Promise<{ readonly cents: number; readonly applications: ApplicationRecord[] }> {
  const applications: ApplicationRecord[] = [];
  let cents = 0;
  const attributeOf = appliedOnBalanceAttribute('');
  for await (const item of queryPrefix(reader, runId, mode, SK.balancePrefix, [])) {
    cents += numberAttribute(item, 'balanceCents');
    const accountId = String(item.accountId ?? String(item.sk).slice(SK.balancePrefix.length));
    for (const [name, entries] of Object.entries(item)) {
      if (!name.startsWith(attributeOf) || !Array.isArray(entries)) continue;
      for (const entry of entries) {
        const { receiveCount, appliedAtMs, amountCents } = parseAppliedOnBalance(entry);
        applications.push({
          eventId: name.slice(attributeOf.length),
          accountId,
          amountCents,
          applications: 1,
          appliedAtMs,
          ...(detailed ? { receiveCount } : {}),
        });
      }
    }
  }
  applications.sort((a, b) =>
    a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : (a.appliedAtMs ?? 0) - (b.appliedAtMs ?? 0),
  );
  return { cents, applications };
}

async function* inOrder<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/**
 * Per account, the state of the highest seq recorded: what a state mode's balances must hold. One
 * pair of numbers per account, however many events.
 */
export class LatestStates {
  private readonly byAccount = new Map<string, { seq: number; cents: number }>();

  add(accountId: string, seq: number, cents: number): void {
    const latest = this.byAccount.get(accountId);
    if (latest === undefined || seq > latest.seq) this.byAccount.set(accountId, { seq, cents });
  }

  totalCents(): number {
    let total = 0;
    for (const { cents } of this.byAccount.values()) total += cents;
    return total;
  }
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
 * harness (the explorer) imports verifyMode in a process without that environment.
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

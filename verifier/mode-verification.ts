// One mode of one run verified: its DLQ swept, its records read, the join run, the outcome assembled.
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigError, InvalidInputError } from '../contract/errors.js';
import { accountOfFifoGroup } from '../contract/message.js';
import { chargeOf, evidenceOf, isFifoMode, type Mode, settingsOf } from '../contract/topology.js';
import {
  groupApplications,
  inOrder,
  LatestStates,
  readApplications,
  readBalancesWithApplications,
} from './application-records.js';
import { type ChargeReader, ChargeTally } from './charge-outcome.js';
import { countMessages, type DeadLetterSweep, sweepDeadLetters } from './dead-letters.js';
import { collectEventDetails, type EventDetailsCollector } from './event-details.js';
import { type FifoDeadLetters, joinByEventId } from './event-id-join.js';
import {
  countRefusals,
  type LedgerReader,
  readBalances,
  readCounters,
  readCrashes,
} from './ledger-reader.js';
import { type ManifestSummary, readManifestEvents } from './manifest.js';
import type { ModeOutcome } from './outcome.js';

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

export interface ModeVerification {
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
export async function verifyModeInDetail(
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
  const balance = settingsOf(mode).balance;
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

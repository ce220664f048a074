/**
 * The one topology definition. The CDK stack, the verifier and the local runtime all read this
 * object, so a mode's settings exist in exactly one place. Adding a mode is six places, each asked
 * for by the type-check: one entry here, its handler file `modes/<mode>.ts`, a line in `ModeNeeds`
 * (modes/kit/lab-mode.ts), its entry in `LAB_MODES` (modes/lab-modes.ts), and two in its test
 * (docs/design.md, "Adding a mode").
 *
 * This module must stay free of aws-cdk-lib imports: Lambda bundles import it too.
 */

import { type ModeSettings, type ResolvedModeSettings, resolveSettings } from './mode-settings.js';

export type { ModeProof, ModeSettings, ProofCount, ResolvedModeSettings } from './mode-settings.js';

/** Every mode starts from these (and the consumer construct, packages/cdk-constructs/src/sqs-consumer.ts, defaults to them). */
export const CONSUMER_DEFAULTS = {
  batchSize: 10,
  maxBatchingWindowSeconds: 0,
  functionTimeoutSeconds: 30,
  visibilityTimeoutSeconds: 180,
  // A crash fails the whole batch, so at a 2% crash rate and batches of 10 about 18% of batches
  // are redelivered. Ten receives keep crashes alone from dead-lettering a message (p ≈ 0.18^10),
  // so the DLQ holds what it is for: messages that can never be applied.
  maxReceiveCount: 10,
  maxConcurrency: 5,
  memoryMb: 256,
} as const;

export const MODES = {
  'at-most-once': {
    ...CONSUMER_DEFAULTS,
    summary: 'deletes the received batch from SQS, then applies each message',
    crashPoint: 'the batch had been deleted, the event not yet applied',
    crashStep: 'UpdateItem',
    reportBatchItemFailures: false,
    deletesOwnBatch: true,
    evidence: 'balance',
    promises: { noLoss: false, noDuplicates: true },
    proof: {
      counts: { crashes: 1, lost: 1, appliedOnce: 0, duplicated: 0 },
      story: 'was deleted, then the process was killed, and it was never applied',
      expected: 'the crash to land after the delete and the event to be lost',
    },
  },
  'at-least-once': {
    ...CONSUMER_DEFAULTS,
    summary: 'applies each message, then Lambda deletes the batch on success',
    crashPoint: 'the event had been applied, the batch not yet acknowledged',
    crashStep: 'acknowledge',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    evidence: 'balance',
    promises: { noLoss: true, noDuplicates: false },
    proof: {
      counts: { crashes: 1, duplicated: 1, extraApplications: 1, lost: 0 },
      story:
        'was applied, the process was killed before the acknowledgement, SQS delivered it again and it was applied a second time',
      expected: 'the crash to land after the credit and the redelivery to credit again',
    },
    redriveProof: {
      counts: { crashes: 1, duplicated: 1, extraApplications: 1, deadLettered: 0, lost: 0 },
      story:
        'was applied, the process was killed before the acknowledgement at the last receive SQS allows, SQS dead-lettered it, and its redriven copy (a new message) was applied a second time',
      expected: 'the redriven copy of the applied, dead-lettered event to be applied again',
    },
  },
  'effectively-once': {
    ...CONSUMER_DEFAULTS,
    evidence: 'records',
    summary:
      'applies each message in one TransactWriteItems with a conditional processed-marker, then Lambda deletes the batch',
    crashPoint: 'the event had been applied, the batch not yet acknowledged',
    crashStep: 'acknowledge',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    promises: { noLoss: true, noDuplicates: true },
    proof: {
      counts: { crashes: 1, appliedOnce: 1, duplicated: 0, suppressedDuplicates: 1, driftCents: 0 },
      story:
        'was applied, the process was killed before the acknowledgement, and the redelivery found the marker and was skipped',
      expected: 'the crash to land after the transaction and the redelivery to be skipped',
    },
    redriveProof: {
      counts: {
        crashes: 1,
        appliedOnce: 1,
        duplicated: 0,
        suppressedDuplicates: 1,
        deadLettered: 0,
        driftCents: 0,
      },
      story:
        'was applied, the process was killed before the acknowledgement at the last receive SQS allows, SQS dead-lettered it, and its redriven copy (a new message) found the marker and was skipped',
      expected: 'the redriven copy of the applied, dead-lettered event to find the marker and be skipped',
    },
  },
  'powertools-idempotency': {
    ...CONSUMER_DEFAULTS,
    evidence: 'records',
    summary:
      'applies each message inside a Powertools makeIdempotent call keyed on the event id (INPROGRESS, work, COMPLETED), then Lambda deletes the batch',
    crashPoint: 'the credit was durable, the idempotency record not yet COMPLETED',
    crashStep: 'UpdateItem',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    idempotencyTable: true,
    // No duplicates is not promised: the idempotency record and the credit are two writes, not one
    // transaction. A crash after the credit and before Powertools marks the record COMPLETED leaves
    // it INPROGRESS; once its in-progress expiry (the invocation's remaining time) has passed, the
    // redelivery may take the record over and runs the credit again. Nothing is lost: the message
    // is deleted only after a successful return.
    promises: { noLoss: true, noDuplicates: false },
    proof: {
      counts: { crashes: 1, duplicated: 1, extraApplications: 1, lost: 0 },
      story:
        'was credited, the process was killed before Powertools marked it COMPLETED, the INPROGRESS record expired with the invocation, and the redelivery credited it again',
      expected:
        'the crash to land before COMPLETED and the redelivery, after the in-progress expiry, to credit again',
    },
  },
  'powertools-message-id': {
    ...CONSUMER_DEFAULTS,
    evidence: 'records',
    summary:
      "applies each message inside a Powertools makeIdempotent call keyed on the SQS messageId, as Powertools' SQS batch example is (INPROGRESS, work, COMPLETED), then Lambda deletes the batch",
    crashPoint: 'the credit was durable, the idempotency record of the message id not yet COMPLETED',
    crashStep: 'UpdateItem',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    idempotencyTable: true,
    inDefaultRun: false,
    // No duplicates is not promised, for two reasons: the crash gap of powertools-idempotency (the
    // idempotency record and the credit are two writes), and the key. The messageId names one SQS
    // message, not one event: a producer re-send of an event is another message with another
    // messageId, and so is every copy a DLQ redrive sends back, so each is credited again. Nothing
    // is lost: the message is deleted only after a successful return.
    promises: { noLoss: true, noDuplicates: false },
    proof: {
      counts: { crashes: 1, duplicated: 1, extraApplications: 1, lost: 0 },
      story:
        'was credited, the process was killed before Powertools marked its message id COMPLETED, the INPROGRESS record expired with the invocation, and the redelivery (the same message id) credited it again',
      expected:
        'the crash to land before COMPLETED and the redelivery, after the in-progress expiry, to credit again',
    },
    redriveProof: {
      counts: { crashes: 1, duplicated: 1, extraApplications: 1, deadLettered: 0, lost: 0 },
      story:
        'was credited, the process was killed before Powertools marked its message id COMPLETED at the last receive SQS allows, SQS dead-lettered it, and its redriven copy, a message id Powertools had never seen, was credited again',
      expected:
        'the redriven copy of the credited, dead-lettered event, a new message id, to be credited again',
    },
  },
  'entry-upsert': {
    ...CONSUMER_DEFAULTS,
    evidence: 'records',
    summary:
      'writes one ledger entry per event keyed on the event id (one UpdateItem that SETs it: a repeat writes the same entry) and derives the balance on read, as the sum of the entries; then Lambda deletes the batch',
    crashPoint: 'the entry had been written, the batch not yet acknowledged',
    crashStep: 'acknowledge',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    balance: 'entries',
    inDefaultRun: false,
    promises: { noLoss: true, noDuplicates: true },
    proof: {
      counts: { crashes: 1, appliedOnce: 1, duplicated: 0, suppressedDuplicates: 1, driftCents: 0 },
      story:
        'was written, the process was killed before the acknowledgement, and the redelivery wrote the same entry again: one entry, counted once',
      expected: 'the crash to land after the entry and the redelivery to rewrite the entry, not add a second',
    },
  },
  'state-upsert': {
    ...CONSUMER_DEFAULTS,
    evidence: 'records',
    summary:
      "writes the account's state: one conditional UpdateItem SETs the balance after the event and its seq as the version, only if the stored version is older (else a newer state is there: superseded), and records the event for the verifier; then Lambda deletes the batch",
    crashPoint:
      'the state had been written (or found superseded) and the event recorded, the batch not yet acknowledged',
    crashStep: 'acknowledge',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    balance: 'state',
    inDefaultRun: false,
    // Nothing is lost (deleted only after the write); nothing duplicates: a repeat SETs nothing,
    // its version is not older. Intermediate states may be skipped (superseded), not lost.
    promises: { noLoss: true, noDuplicates: true },
    proof: {
      counts: { crashes: 1, appliedOnce: 1, duplicated: 0, suppressedDuplicates: 1, driftCents: 0 },
      story:
        'was written, the process was killed before the acknowledgement, and the redelivery found its own version stored and wrote nothing',
      expected:
        'the crash to land after the state write and the redelivery to fail the version condition, not write again',
    },
    redriveProof: {
      counts: {
        crashes: 1,
        appliedOnce: 1,
        duplicated: 0,
        suppressedDuplicates: 1,
        deadLettered: 0,
        driftCents: 0,
      },
      story:
        'was written, the process was killed before the acknowledgement at the last receive SQS allows, SQS dead-lettered it, and its redriven copy found its own version stored and wrote nothing',
      expected: 'the redriven copy of the written, dead-lettered event to fail the version condition',
    },
  },
  'fifo-versioned': {
    ...CONSUMER_DEFAULTS,
    summary:
      'credits on a FIFO queue (one group per run and account) with one conditional UpdateItem: ADD the amount and SET version = seq, only if the stored version is seq − 1 (a repeat finds its own or a newer version and writes nothing; a gap fails the record until its predecessor is there); then Lambda deletes the batch',
    crashPoint: 'the credit had been written (or found already there), the batch not yet acknowledged',
    crashStep: 'acknowledge',
    queue: 'fifo',
    evidence: 'balance',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    inDefaultRun: false,
    // Nothing is lost (deleted only after the write), nothing duplicates: a repeat's seq is not
    // the stored version + 1. A gap (the predecessor dead-lettered) blocks the account's later
    // events until they are dead-lettered too, in order: docs/ordering.md, "The gap policy".
    promises: { noLoss: true, noDuplicates: true },
    proof: {
      counts: { crashes: 1, appliedOnce: 1, duplicated: 0, suppressedDuplicates: 1, driftCents: 0 },
      story:
        'was credited, the process was killed before the acknowledgement, and the redelivery found its own seq as the stored version and wrote nothing',
      expected:
        'the crash to land after the credit and the redelivery to fail the version condition, not credit again',
    },
    redriveProof: {
      counts: {
        crashes: 1,
        appliedOnce: 1,
        duplicated: 0,
        suppressedDuplicates: 1,
        deadLettered: 0,
        driftCents: 0,
      },
      story:
        'was credited, the process was killed before the acknowledgement at the last receive SQS allows, SQS dead-lettered it, and its redriven copy found its seq already in the stored version and wrote nothing',
      expected: 'the redriven copy of the credited, dead-lettered event to fail the version condition',
    },
  },
  'charge-no-key': {
    ...CONSUMER_DEFAULTS,
    evidence: 'records',
    summary:
      "charges each event at the payment provider WITHOUT an idempotency key, then records the charge in effectively-once's marker transaction (charge id on the marker, and the credit); then Lambda deletes the batch",
    crashPoint: 'the card had been charged at the provider, the charge not yet recorded',
    crashStep: 'TransactWriteItems',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    charge: { idempotencyKey: false },
    inDefaultRun: false,
    // The ledger is exact (the marker transaction): nothing lost, nothing applied twice. The card is
    // not: every redelivery after a charge, and every retry after a lost response, charges again.
    promises: { noLoss: true, noDuplicates: true },
    proof: {
      counts: { crashes: 1, appliedOnce: 1, duplicated: 0, driftCents: 0, charges: 2, doubleCharged: 1 },
      story:
        'was charged, the process was killed before the charge was recorded, and the redelivery, with no idempotency key, charged the card again: recorded once, charged twice',
      expected: 'the crash to land after the charge and the redelivery to charge a second time',
    },
  },
  'charge-with-key': {
    ...CONSUMER_DEFAULTS,
    evidence: 'records',
    summary:
      "charges each event at the payment provider with the event's id as the Idempotency-Key, then records the charge in effectively-once's marker transaction (charge id on the marker, and the credit); then Lambda deletes the batch",
    crashPoint: 'the card had been charged at the provider, the charge not yet recorded',
    crashStep: 'TransactWriteItems',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    charge: { idempotencyKey: true },
    inDefaultRun: false,
    // Exact at both ends while the provider keeps the key (24 hours): the age guard refuses an
    // event older than the shorter of the marker's and the key's retention (docs/side-effects.md).
    promises: { noLoss: true, noDuplicates: true },
    proof: {
      counts: { crashes: 1, appliedOnce: 1, duplicated: 0, driftCents: 0, charges: 1, doubleCharged: 0 },
      story:
        'was charged, the process was killed before the charge was recorded, and the redelivery sent the same idempotency key: the provider replayed the first charge, recorded once, charged once',
      expected: "the crash to land after the charge and the redelivery to get the first charge's replay",
    },
  },
  'marker-then-credit': {
    ...CONSUMER_DEFAULTS,
    summary:
      'TEACHING, do not copy: a conditional PutItem of a processed-marker, then the credit as a second write (two writes, not one transaction); then Lambda deletes the batch',
    crashPoint: 'the marker had been written, the credit not yet sent',
    crashStep: 'UpdateItem',
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    // Its application rides on the credit: a marker alone is not evidence of a credit.
    evidence: 'balance',
    inDefaultRun: false,
    // Loses an event stopped between its two writes (its redelivery finds the marker), and one whose
    // marker's response is lost (the SDK's retry fails the put's own condition); duplicates a credit
    // whose response is lost (an UpdateItem carries no token). `npm run explore` shows each cell.
    promises: { noLoss: false, noDuplicates: false },
    proof: {
      counts: { crashes: 1, lost: 1, appliedOnce: 0, duplicated: 0 },
      story:
        'had its marker written, the process was killed before the credit, and the redelivery found the marker and skipped it: never credited',
      expected: 'the crash to land after the marker and the redelivery to skip the event',
    },
  },
  'credit-then-marker': {
    ...CONSUMER_DEFAULTS,
    summary:
      'TEACHING, do not copy: reads the processed-marker, credits, then puts the marker as a second write (two writes, not one transaction); then Lambda deletes the batch',
    crashPoint: 'the credit had been written, the marker not yet',
    crashStep: 'PutItem',
    readsOwnPartition: true,
    reportBatchItemFailures: true,
    deletesOwnBatch: false,
    evidence: 'balance',
    inDefaultRun: false,
    // Duplicates an event stopped between the credit and the marker, and a credit whose response is
    // lost; loses nothing (deleted only after both writes).
    promises: { noLoss: true, noDuplicates: false },
    proof: {
      counts: { crashes: 1, duplicated: 1, extraApplications: 1, lost: 0 },
      story:
        'was credited, the process was killed before its marker was written, and the redelivery found no marker and credited it again',
      expected: 'the crash to land after the credit and the redelivery to credit again',
    },
  },
} as const satisfies Record<string, ModeSettings>;

export type Mode = keyof typeof MODES;

/**
 * What a mode's name may look like: it names queues, functions, ledger partitions and Powertools'
 * key prefix, and the DynamoDB proxy finds it in requests with this pattern.
 */
export const MODE_NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

export const MODE_NAMES = Object.keys(MODES) as Mode[];

/** The modes a run includes when `--modes` is not given: those not set `inDefaultRun: false`. */
export const DEFAULT_MODES: readonly Mode[] = MODE_NAMES.filter((mode) => settingsOf(mode).inDefaultRun);

/** A mode's settings, its optional flags resolved to their defaults: every reader's way in, no cast. */
export function settingsOf(mode: Mode): ResolvedModeSettings {
  return resolveSettings(MODES[mode]);
}

export function isMode(value: string): value is Mode {
  return Object.hasOwn(MODES, value);
}

/** The mode's side effect at the payment provider, if it has one (topology `charge`). */
export function chargeOf(mode: Mode): ModeSettings['charge'] {
  return settingsOf(mode).charge;
}

/** Lambda's limit for an SQS FIFO event source: at most 10 records per batch, and no batching window. */
export const FIFO_MAX_BATCH_SIZE = 10;

/** Where the verifier finds the mode's applications ({@link ModeSettings.evidence}). */
export function evidenceOf(mode: Mode): ModeSettings['evidence'] {
  return MODES[mode].evidence;
}

/** Whether the mode's queue and DLQ are FIFO queues. */
export function isFifoMode(mode: Mode): boolean {
  return settingsOf(mode).queue === 'fifo';
}

/** The mode's queue names: FIFO queue names must end in `.fifo`. */
export function queueNames(mode: Mode): { readonly queue: string; readonly deadLetterQueue: string } {
  const suffix = isFifoMode(mode) ? '.fifo' : '';
  return { queue: `${mode}${suffix}`, deadLetterQueue: `${mode}-dlq${suffix}` };
}

/** The verifier: counting 100,000 records per mode is paginated reads, not compute, but give it room. */
export const VERIFIER = { functionTimeoutSeconds: 300, memoryMb: 1024 } as const;

/** Settings shared by every queue (how long things are kept: contract/retention.ts). */
export const STORAGE = {
  /**
   * Largest message, body and attributes (SQS's maximum and default since 2025: 1 MiB). Set
   * explicitly on every queue, so the stack, the emulator and the producer's near-limit poison agree.
   */
  maxMessageBytes: 1_048_576,
} as const;

/**
 * Bumped when the ledger layout, the stack outputs or the resources' logical ids change, so a driver
 * can refuse a stale stack. 7: the constructs (new logical ids: docs/deploying.md, "Upgrading a
 * stack"), the DeployedModes and Scaling outputs.
 */
export const TOPOLOGY_VERSION = '7';

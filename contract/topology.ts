/**
 * The one topology definition. The CDK stack, the verifier and the local runtime all read this
 * object, so a mode's settings exist in exactly one place. Adding a mode is six places, each asked
 * for by the type-check: one entry here, its handler file `modes/<mode>.ts`, a line in `ModeNeeds`
 * (modes/kit/lab-mode.ts), its entry in `LAB_MODES` (modes/lab-modes.ts), and two in its test
 * (docs/design.md, "Adding a mode").
 *
 * This module must stay free of aws-cdk-lib imports: Lambda bundles import it too.
 */

/** Counts of the verifier's outcome (docs/design.md, "Outcome definitions") a proof can pin. */
export type ProofCount =
  | 'crashes'
  | 'appliedOnce'
  | 'duplicated'
  | 'extraApplications'
  | 'lost'
  | 'deadLettered'
  | 'suppressedDuplicates'
  | 'driftCents'
  | 'charges'
  | 'doubleCharged';

/**
 * What `npm run proofs` must find for a mode after one event whose first delivery is killed at the
 * mode's crash point: the exact counts, and the story they tell.
 */
export interface ModeProof {
  readonly counts: Readonly<Partial<Record<ProofCount, number>>>;
  /** What happened to the event, as a sentence after its id ("evt-1 was applied, …"). */
  readonly story: string;
  /** What the proof expected, for a failed proof ("expected …; the ledger shows …"). */
  readonly expected: string;
}

export interface ModeSettings {
  /** What the consumer does, in one line (used in docs, `--help` and reports). */
  readonly summary: string;
  /**
   * Where the handler's injected crash lands, completing "when it hit, …" (the page's tooltip of a
   * crashed event, the docs). The handler calls `maybeCrash` at exactly this point.
   */
  readonly crashPoint: string;
  /**
   * The step of one event's trace (`npm run explore`) that the crash point comes just before: the
   * operation of the request it precedes, or `acknowledge`. The explorer's cell "killed before
   * this step" is the crash point, and the component layer checks the proof's counts there.
   */
  readonly crashStep: 'acknowledge' | 'UpdateItem' | 'TransactWriteItems' | 'PutItem';
  /**
   * The handler reads its own ledger partition (GetItem) besides writing it: the stack grants the
   * read under the same LeadingKeys condition. Found by running the synthesized assembly with its
   * IAM enforced (`npm run assembly`): credit-then-marker's read of its marker was denied.
   * @default false
   */
  readonly readsOwnPartition?: boolean;
  /** SQS event source mapping batch size. */
  readonly batchSize: number;
  /** Batching window in seconds; AWS requires > 0 when batchSize > 10. */
  readonly maxBatchingWindowSeconds: number;
  /** Lambda function timeout in seconds. */
  readonly functionTimeoutSeconds: number;
  /** Queue visibility timeout in seconds; AWS recommends ≥ 6 × function timeout. */
  readonly visibilityTimeoutSeconds: number;
  /** Receives before SQS moves a message to the mode's DLQ. */
  readonly maxReceiveCount: number;
  /** Event source mapping maximum concurrency (AWS minimum is 2). */
  readonly maxConcurrency: number;
  /** Whether the handler returns `batchItemFailures` (partial batch responses). */
  readonly reportBatchItemFailures: boolean;
  /** Whether the handler deletes its own batch (needs `sqs:DeleteMessage` and the queue URL). */
  readonly deletesOwnBatch: boolean;
  /** Lambda memory in MB. */
  readonly memoryMb: number;
  /**
   * What the mode promises in a correct run; the report flags a count that breaks it. Loss means
   * an event neither applied nor dead-lettered. "Never duplicates" for at-most-once holds per SQS
   * delivery only: a record delivered twice (SQS and the event source mapping are at-least-once, a
   * visibility overrun, a producer re-send) is applied twice.
   */
  readonly promises: { readonly noLoss: boolean; readonly noDuplicates: boolean };
  /** The one-crash proof of the mode (`npm run proofs`). */
  readonly proof: ModeProof;
  /**
   * The mode's redrive proof (`npm run proofs`): one event applied, its delivery killed before the
   * acknowledgement at the last receive SQS allows, so it is dead-lettered although applied; then
   * the DLQ is redriven. The counts are the outcome after the redrive; that the event was applied
   * once and dead-lettered before it is the same for every mode (harness/studies/proofs/proofs.ts).
   * @default none: a mode whose crash cannot leave an applied event in the DLQ (at-most-once
   * deletes before it works) has none
   */
  readonly redriveProof?: ModeProof;
  /**
   * Whether the consumer keeps its idempotency records in a table of their own (Powertools'
   * persistence layer), apart from the ledger: the stack and the local runtime create it and pass
   * its name in `IDEMPOTENCY_TABLE_NAME`.
   * @default false: idempotency state, if any, lives in the ledger
   */
  readonly idempotencyTable?: boolean;
  /**
   * What an account's balance is, and so what the verifier reads and checks:
   * - `sum` — a balance item the consumer adds each amount to; checked against the application
   *   records' sum;
   * - `entries` — no balance item: derived on read, the sum of the mode's entries (entry-upsert);
   * - `state` — a balance item holding the balance after the newest event written (state-upsert),
   *   checked against the state the application records imply (per account, the
   *   `balanceAfterCents` of the highest seq recorded), with the `superseded` count.
   * @default 'sum'
   */
  readonly balance?: 'sum' | 'entries' | 'state';
  /**
   * Where the verifier finds each application:
   * - `records` — items `APP#…` the consumer writes (a marker, an entry, a record per application);
   * - `balance` — on the balance item the consumer credits, added by the lab to the consumer's own
   *   single UpdateItem (appliedOnBalanceAttribute, contract/ledger-keys.ts), in the same write and
   *   under the same condition: the modes whose production shape is one write with no item of its
   *   own per event.
   *
   * Required: the verifier reads the wrong items if it is wrong, so every mode says it.
   */
  readonly evidence: 'records' | 'balance';
  /**
   * The mode's queue and DLQ:
   * - `standard` — at-least-once delivery, no order;
   * - `fifo` — `.fifo` queues, `MessageGroupId` = `<runId>:<accountId>`, `MessageDeduplicationId` =
   *   `<runId>:<eventId>` (fifoIdsOf), deduplication per group and throughput per group (high throughput). Lambda then takes at
   *   most 10 records per batch and no batching window ({@link FIFO_MAX_BATCH_SIZE}), keeps one
   *   batch per group in flight, and the handler stops a group at its first failure, reporting it
   *   and every later record of the group (packages/consumer-cores/src/batch.ts).
   * @default 'standard'
   */
  readonly queue?: 'standard' | 'fifo';
  /**
   * A side effect outside DynamoDB (docs/side-effects.md): the consumer charges each event at the
   * payment provider, then records the charge in effectively-once's marker transaction (the charge
   * id on the marker). `idempotencyKey` says whether the charge carries one (the event's id), which
   * the provider honours: a repeat of the key replays the first charge instead of charging again.
   * The stack and the local runtime give such a mode the provider's URL; the verifier joins the
   * provider's ledger of charges by event id.
   * @default none: the consumer has no side effect outside the ledger
   */
  readonly charge?: { readonly idempotencyKey: boolean };
  /**
   * Whether a run includes the mode when `--modes` is not given ({@link DEFAULT_MODES}: the default
   * of the experiment's and the bench's `--modes`); `npm run proofs` proves every mode.
   * @default true
   */
  readonly inDefaultRun?: boolean;
}

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
export const DEFAULT_MODES: readonly Mode[] = MODE_NAMES.filter(
  (mode) => (MODES[mode] as ModeSettings).inDefaultRun !== false,
);

export function isMode(value: string): value is Mode {
  return Object.hasOwn(MODES, value);
}

/** The mode's side effect at the payment provider, if it has one (topology `charge`). */
export function chargeOf(mode: Mode): ModeSettings['charge'] {
  return (MODES[mode] as ModeSettings).charge;
}

/** Lambda's limit for an SQS FIFO event source: at most 10 records per batch, and no batching window. */
export const FIFO_MAX_BATCH_SIZE = 10;

/** Where the verifier finds the mode's applications ({@link ModeSettings.evidence}). */
export function evidenceOf(mode: Mode): ModeSettings['evidence'] {
  return MODES[mode].evidence;
}

/** Whether the mode's queue and DLQ are FIFO queues. */
export function isFifoMode(mode: Mode): boolean {
  return (MODES[mode] as ModeSettings).queue === 'fifo';
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

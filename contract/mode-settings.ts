/** What a mode of the topology (contract/topology.ts) is made of: its settings' types and defaults. */

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

/** The optional flags' defaults, each documented on its field of {@link ModeSettings}. */
const FLAG_DEFAULTS = {
  readsOwnPartition: false,
  idempotencyTable: false,
  balance: 'sum',
  queue: 'standard',
  inDefaultRun: true,
} as const;

/** A mode's settings with every optional flag resolved (a proof to redrive and a charge stay optional: none is none). */
export type ResolvedModeSettings = ModeSettings & {
  readonly [K in keyof typeof FLAG_DEFAULTS]-?: NonNullable<ModeSettings[K]>;
};

/** The settings with their optional flags' defaults filled in (a flag given as undefined too). */
export function resolveSettings(settings: ModeSettings): ResolvedModeSettings {
  return {
    ...settings,
    readsOwnPartition: settings.readsOwnPartition ?? FLAG_DEFAULTS.readsOwnPartition,
    idempotencyTable: settings.idempotencyTable ?? FLAG_DEFAULTS.idempotencyTable,
    balance: settings.balance ?? FLAG_DEFAULTS.balance,
    queue: settings.queue ?? FLAG_DEFAULTS.queue,
    inDefaultRun: settings.inDefaultRun ?? FLAG_DEFAULTS.inDefaultRun,
  };
}

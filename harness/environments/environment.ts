import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EffectiveModeSettings } from '../../contract/deployment-settings.js';
import type { Mode } from '../../contract/topology.js';
import type { VerifierResult } from '../../verifier/verifier.js';
import type { DeliveryRound, RuntimeTimeline } from '../local-aws/lambda-runtime/timeline.js';
import type { RedeployChanges } from './redeploy-command.js';

export type { EffectiveModeSettings };

/** "Each event poller can handle up to 10 concurrent invokes" (Lambda's guide to SQS scaling). */
export const INVOKES_PER_POLLER = 10;

/** `5`, or `up to 100 (pollers 2–10)`: what bounds a mode's concurrency, for the terminal and the page. */
export function concurrencyText(settings: EffectiveModeSettings): string {
  const pollers = settings.provisionedPollers;
  return pollers === undefined
    ? String(settings.maxConcurrency)
    : `up to ${settings.maxConcurrency} (pollers ${pollers.minimumPollers}–${pollers.maximumPollers})`;
}

export interface EnvironmentDescription {
  readonly target: string;
  readonly crashRate: number;
  readonly crashSeed: string;
  readonly modes: Readonly<Record<Mode, EffectiveModeSettings>>;
}

/** Live numbers that only an environment running the consumers itself can see. */
export interface LiveModeStats {
  readonly deliveries: number;
  /** Records the event source mapping deleted after a successful invocation: done with. */
  readonly acknowledged: number;
  readonly inFlight: number;
  /** Environments that died mid-invocation (injected crashes). */
  readonly crashes: number;
  /** Invocations that hit the function timeout (the environment was killed). */
  readonly timeouts: number;
  readonly slowestInvocationMs: number;
  /** Environments started by an invocation (after a crash, a timeout, or with no prewarm). */
  readonly coldStarts: number;
  /** Environments initialised before the first message (prewarm); absent in older reports. */
  readonly prewarmed?: number;
  /** The longest init of any environment, in ms; absent in older reports. */
  readonly slowestInitMs?: number;
  /** Batches whose invocation ended after their receive + the visibility timeout: SQS may have delivered them twice. */
  readonly visibilityOverruns: number;
  /** Faults the local runtime injected into this mode (see --help). */
  readonly injected: InjectedFaults;
  /** Deliveries, acknowledgements and failed batches over time (absent before the first record). */
  readonly timeline?: RuntimeTimeline;
  /** Per receive count, its records and when its last batch was done; absent in older reports. */
  readonly rounds?: readonly DeliveryRound[];
}

export interface InjectedFaults {
  /** Records the event source mapping delivered a second time on its own. */
  readonly redelivered: number;
  /** Environments SIGKILLed by the runtime at a random moment of an invocation. */
  readonly kills: number;
  /** Invocations made slow by the work delay. */
  readonly slowInvocations: number;
  /** DynamoDB requests answered with a throttling error, a 5xx, or applied with the response lost. */
  readonly throttled: number;
  readonly serverErrors: number;
  readonly lostResponses: number;
  /** Transactions cancelled with TransactionConflict (hot keys; DynamoDB Local never does it itself). */
  readonly conflicts: number;
  /** DynamoDB requests answered 503 ServiceUnavailable during the outage window; absent in older reports. */
  readonly outageRejections?: number;
}

export interface VerifierOptions {
  readonly events?: boolean;
}

export interface VerifierInvocation {
  readonly result: VerifierResult;
  /** Peak resident memory of the verifier's process, when the environment can measure it. */
  readonly peakRssKb?: number;
}

/**
 * Where an experiment runs: the queues, the ledger and the verifier. The driver (experiment.ts)
 * only talks to this interface, so it is the same for the embedded emulators, LocalStack and a
 * deployed stack.
 */
export interface ExperimentEnvironment {
  readonly description: EnvironmentDescription;
  /**
   * A deployed stack: the command that redeploys it with `changes`, keeping what its outputs show
   * (harness/environments/redeploy-command.ts). Absent where nothing is deployed.
   */
  readonly redeployCommand?: (changes: RedeployChanges) => string;
  readonly sqs: SQSClient;
  readonly ddb: DynamoDBDocumentClient;
  readonly tableName: string;
  /** How often to poll queue depths, and how many empty polls in a row mean drained. */
  readonly drainPolicy: { readonly pollMs: number; readonly stablePolls: number };
  queueUrl(mode: Mode): string;
  /** Visible + in-flight (+ delayed) messages of a mode's source queue. */
  queueDepth(mode: Mode): Promise<{ readonly visible: number; readonly inFlight: number }>;
  /** Visible + in-flight messages of a mode's DLQ. */
  deadLetterQueueDepth(mode: Mode): Promise<{ readonly visible: number; readonly inFlight: number }>;
  /**
   * Moves every message of the mode's DLQ back to its source queue, as a DLQ redrive does (a new
   * message: a new MessageId, the receive count starting over); returns how many were moved.
   * docs/redrive.md says how each target does it.
   */
  redrive(mode: Mode): Promise<number>;
  /**
   * Called once, right before the run's first send: the clock of the faults timed from it (the
   * outage window, --outage-after) starts now. Only an environment that injects such faults has it.
   */
  onProduceStart?(): void;
  /** Consumer-side live stats, if this environment runs the consumers in-process. */
  liveStats?(mode: Mode): LiveModeStats;
  /** The modes this environment runs consumers for. */
  readonly modes: readonly Mode[];
  /** `events: true` asks for every event's outcome too (runs of at most MAX_DETAILED_EVENTS events). */
  invokeVerifier(
    runId: string,
    modes: readonly Mode[],
    options?: VerifierOptions,
  ): Promise<VerifierInvocation>;
  /** A fatal problem seen by the consumers (e.g. a handler that cannot initialise), if any. */
  fatalError?(): Error | undefined;
  /** Stops everything the environment started; calling it again waits for the same stop. */
  stop(): Promise<void>;
}

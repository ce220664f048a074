import { chargeOf, evidenceOf, MODE_NAMES } from '../../contract/topology.js';
/**
 * `npm run experiment`'s options as the run needs them. The options themselves (names, ranges,
 * defaults, targets, help) are declared in harness/options/declarations/ and parsed in harness/options/; this
 * turns the parsed values into the experiment's configuration.
 */
import { LOCAL_MAX_CONCURRENCY, localVisibilityTimeoutSeconds } from '../environments/local-timing.js';
import type { FaultSettings } from '../local-aws/faults/faults.js';
import { DEFAULTS, type OptionName, type Target } from '../options/declaration.js';
import { type ParsedOptions, parseOptions } from '../options/parse.js';
import { UsageError } from '../options/usage-error.js';
import type { ExperimentConfig } from '../run/experiment.js';

export interface CliOptions {
  readonly json: boolean;
  /** Open the HTML report in a browser when the run is done. */
  readonly open: boolean;
  /** Embedded: no prewarm; every execution environment starts on its first invocation. */
  readonly coldStarts: boolean;
  readonly target: Target;
  readonly config: ExperimentConfig;
  /** Deployed targets: the CloudFormation stack, its region, and LocalStack's endpoint. */
  readonly stackName: string;
  readonly region: string | undefined;
  readonly endpoint: string | undefined;
  /** Options the user actually passed (a default never contradicts a deployment). */
  readonly explicit: ReadonlySet<OptionName>;
}

/**
 * The producer's and the provider's faults need what they kill: a producer process, a relay, a
 * charge mode. Given without it, a fault would be silently ignored.
 */
function refuseSideEffectFaultsWithoutTheirSide(values: ParsedOptions<'experiment'>['values']): void {
  const producer = values.producer;
  if (values['relay-crash-rate'] > 0 && producer !== 'outbox') {
    throw new UsageError('--relay-crash-rate needs --producer outbox (the relay publishes the outbox)');
  }
  if (values['relay-crash-rate'] >= 1) {
    throw new UsageError(
      '--relay-crash-rate must be below 1: at 1 every relay is killed before its first checkpoint, and the outbox is never published',
    );
  }
  if (values['producer-crash-rate'] > 0 && producer === 'direct') {
    throw new UsageError(
      '--producer-crash-rate needs --producer dual-write or outbox (the harness itself cannot be killed mid-run)',
    );
  }
  if (values['provider-lost-response-rate'] > 0 && !values.modes.some((mode) => chargeOf(mode))) {
    throw new UsageError(
      '--provider-lost-response-rate applies to the charge modes: add --modes charge-no-key,charge-with-key',
    );
  }
}

/** Reads `npm run experiment`'s command line; throws UsageError saying what is wrong. */
export function parseCliArgs(argv: readonly string[]): CliOptions {
  return cliOptionsOf(parseOptions('experiment', argv));
}

/**
 * The one-write modes carry each application on the balance item it credits (contract/ledger-keys.ts,
 * appliedOnBalanceAttribute: about 40 bytes each), and DynamoDB holds 400 KB per item. Past this many
 * messages per account, with room for redeliveries, a balance item could outgrow it and its credits
 * fail: refused before the run, with what to change.
 */
export const MAX_MESSAGES_PER_ACCOUNT_ON_BALANCE = 5000;

function refuseBalanceEvidenceBeyondItemSize(values: ParsedOptions<'experiment'>['values']): void {
  const modes = values.modes.filter((mode) => evidenceOf(mode) === 'balance');
  const perAccount = Math.ceil(values.messages / values.accounts);
  if (modes.length === 0 || perAccount <= MAX_MESSAGES_PER_ACCOUNT_ON_BALANCE) return;
  throw new UsageError(
    `--messages ${values.messages} over --accounts ${values.accounts} is ${perAccount} messages per account: ` +
      `${modes.join(' and ')} keep each application on the account's balance item, which DynamoDB caps at 400 KB ` +
      `(about ${MAX_MESSAGES_PER_ACCOUNT_ON_BALANCE} per account here). Raise --accounts to at least ` +
      `${Math.ceil(values.messages / MAX_MESSAGES_PER_ACCOUNT_ON_BALANCE)}, or leave ${modes.join(' and ')} out of --modes.`,
  );
}

/** The experiment's configuration from its parsed options. */
export function cliOptionsOf({ values, explicit }: ParsedOptions<'experiment'>): CliOptions {
  refuseSideEffectFaultsWithoutTheirSide(values);
  refuseBalanceEvidenceBeyondItemSize(values);
  const workDelayMs = values['work-delay'];
  const faults: FaultSettings = {
    poisonRate: values['poison-rate'],
    producerDuplicateRate: values['producer-duplicate-rate'],
    redeliveryRate: values['redelivery-rate'],
    throttleRate: values['throttle-rate'],
    workDelayMs,
    workDelayRate: workDelayMs > 0 ? values['work-delay-rate'] : 0,
    killRate: values['kill-rate'],
    ...(values['provider-lost-response-rate'] > 0
      ? { providerLostResponseRate: values['provider-lost-response-rate'] }
      : {}),
    ...(values['producer-crash-rate'] > 0 ? { producerCrashRate: values['producer-crash-rate'] } : {}),
    ...(values['relay-crash-rate'] > 0 ? { relayCrashRate: values['relay-crash-rate'] } : {}),
    ...(values['outage-for'] > 0
      ? { outage: { afterSeconds: values['outage-after'], forSeconds: values['outage-for'] } }
      : {}),
  };
  // Unset means each mode's topology batch size; the report shows what ran.
  const batchSize = values['batch-size'];
  const concurrency = values.concurrency;
  // A redrive is where the key matters: unless --modes says otherwise it runs every mode, the
  // messageId-keyed Powertools consumer included (a redriven copy has a new messageId).
  const modes = values.redrive && !explicit.has('modes') ? MODE_NAMES : values.modes;
  return {
    json: values.json,
    open: values.open,
    coldStarts: values['cold-starts'],
    target: values.target,
    stackName: values.stack,
    region: values.region,
    endpoint: values.endpoint,
    explicit,
    config: {
      messages: values.messages,
      accounts: values.accounts,
      crashRate: values['crash-rate'],
      batchSize,
      seed: values.seed ?? Math.random().toString(36).slice(2, 10),
      modes,
      concurrency,
      visibilityTimeoutSeconds:
        values['visibility-timeout'] ??
        localVisibilityTimeoutSeconds(
          batchSize ?? DEFAULTS.batchSize,
          concurrency ?? LOCAL_MAX_CONCURRENCY,
          modes.length,
          !values['cold-starts'],
        ),
      maxReceiveCount: values['max-receive-count'],
      faults,
      ...(values.producer !== 'direct' ? { producer: values.producer } : {}),
      ...(values['marker-ttl'] !== undefined ? { markerTtlSeconds: values['marker-ttl'] } : {}),
      ageGuard: !values['no-age-guard'],
      ...(values.redrive ? { redrive: { afterSeconds: values['redrive-after'] } } : {}),
    },
  };
}

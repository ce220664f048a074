import { parseArgs } from 'node:util';
import { isMode, MODE_NAMES, type Mode } from '../../contract/topology.js';
import {
  LOCAL_MAX_CONCURRENCY,
  localVisibilityTimeoutSeconds,
  MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS,
} from '../environments/local-timing.js';
import type { ExperimentConfig } from '../experiment/experiment.js';
import type { FaultSettings } from '../faults/faults.js';

export const TARGETS = ['embedded', 'localstack', 'aws'] as const;
export type Target = (typeof TARGETS)[number];

export interface CliOptions {
  readonly help: boolean;
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
  readonly explicit: ReadonlySet<string>;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const DEFAULTS = {
  messages: 200,
  accounts: 10,
  crashRate: 0.02,
  batchSize: 10,
  /** At the default batch size and concurrency; see localVisibilityTimeoutSeconds for others. */
  visibilityTimeoutSeconds: MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS,
  workDelayRate: 0.2,
} as const;

/** Faults only a runtime on this machine can inject: a deployed stack's Lambda service is AWS's. */
const EMBEDDED_ONLY_FAULTS = [
  'redelivery-rate',
  'throttle-rate',
  'work-delay',
  'work-delay-rate',
  'kill-rate',
];

export const HELP = `Usage: npm run experiment -- [options]

Runs the delivery-semantics experiment: produces N messages per mode, lets each mode's consumer
process them (with injected crashes), waits until every queue is drained, and prints what the
verifier counted: applied once, duplicated, lost, dead-lettered, and whether the money adds up.

Targets:
  --target embedded        everything on this machine (default): fauxqs for SQS, DynamoDB Local
                           (needs Java 17+), the real handler bundles in child processes behind a
                           local Lambda SQS event source mapping
  --target aws             a stack deployed with \`npx cdk deploy\` to an AWS account; uses your
                           AWS credentials (profile, SSO or env) and region
  --target localstack      a stack deployed to LocalStack with \`npm run deploy:local\`
                           (see localstack/README.md)

Deployed targets (aws, localstack):
  --stack NAME             CloudFormation stack name                          (default DeliverySemantics)
  --region REGION          AWS region                                         (default: AWS_REGION/profile;
                                                                               us-east-1 for localstack)
  --endpoint URL           LocalStack endpoint                                (default http://127.0.0.1:4566)
  Crash rate, crash seed and batch size are deployment settings there: the run reads and prints
  them; passing a different --crash-rate or --batch-size is refused with how to redeploy.
  --concurrency, --visibility-timeout, --max-receive-count, --cold-starts and the runtime faults
  (--redelivery-rate, --throttle-rate, --work-delay, --kill-rate) apply to the embedded target only.

Options:
  --messages N             messages per mode                                  (default ${DEFAULTS.messages})
  --accounts K             accounts the amounts are spread over               (default ${DEFAULTS.accounts})
  --crash-rate R           probability 0..1 that a handler SIGKILLs itself at  (default ${DEFAULTS.crashRate})
                           its mode's crash point, per message and delivery
  --batch-size B           event source mapping batch size, 1..10000          (default: topology, ${DEFAULTS.batchSize})
  --seed S                 seeds the manifest (accounts, amounts) and the     (default: random)
                           crash decisions; the same seed reproduces a run
  --modes a,b              modes to run: ${MODE_NAMES.join(', ')}
                                                                              (default: all)
  --concurrency C          embedded: batches in flight per mode (ESM maximum  (default 2; the
                           concurrency; AWS allows 2..1000); one DynamoDB     deployed topology: 5)
                           Local serves every mode, so more callers only
                           make each batch slower
  --visibility-timeout S   local queue visibility timeout in seconds, 3..    (default ${DEFAULTS.visibilityTimeoutSeconds} at batch 10
                           43200; short so crashed batches come back          × concurrency 2;
                           quickly; the local function timeout is 2 s less    ⌈batch × concurrency
                           (and the batching window's 1 s above batch 10)     / 10⌉ + 3, + 1 above
                                                                              batch 10)
  --max-receive-count N    receives before a message moves to its DLQ,        (default: topology, 10)
                           1..1000 (embedded; a lower value dead-letters
                           poison sooner)
  --cold-starts            embedded: start each execution environment on its  (default: every mode's
                           first invocation, as on-demand Lambda does; the     environments are
                           first batches then all cold-start at once           initialised before
                                                                               the first message)

Faults (each drawn per event from --seed, the same schedule for every mode; counted in the report):
  --poison-rate R          the producer sends an event as an invalid body     (default 0)
                           instead (malformed JSON, a missing field, a wrong
                           type, a zero/negative/fractional/huge amount, an
                           unknown field, a body near SQS's 1 MiB limit);
                           never applied; dead-lettered after the max receive
                           count by the work-first modes, lost by at-most-once
  --producer-duplicate-rate R
                           the producer sends an event twice (same event id,  (default 0)
                           a new SQS message), as a retry after a lost
                           SendMessage response does
  --redelivery-rate R      embedded: the event source mapping delivers a      (default 0)
                           successfully processed record once more, as AWS
                           documents it may (at least once, even without
                           errors)
  --throttle-rate R        embedded: a handler's DynamoDB request is          (default 0)
                           throttled, answered with a 5xx, applied with its
                           response lost (the SDK retries it with the same
                           ClientRequestToken), or a transaction is cancelled
                           by a conflict; a proxy in front of DynamoDB Local,
                           the handler code unchanged
  --work-delay MS          embedded: a slow invocation spends MS more before  (default 0)
                           its work, and may outlive its messages' visibility
                           timeout: the same message is then in two
                           invocations at once
  --work-delay-rate R      embedded: share of invocations that are slow       (default ${DEFAULTS.workDelayRate} with --work-delay)
  --kill-rate R            embedded: the environment is SIGKILLed at a random (default 0)
                           moment of an invocation (a timer, not a code point:
                           also while a transaction is in flight)
  Hot keys: --accounts 1 --concurrency 8 makes transactions conflict on AWS; DynamoDB Local
  serializes them instead, so locally conflicts come from --throttle-rate. Retries are counted.

  --json                   print the report as JSON on stdout, nothing else
  --open                   open the HTML report in a browser when the run is done
  -h, --help               show this help

Every run writes reports/<runId>.json and reports/<runId>.html (a page with a cell per message per
mode, timelines and the table; self-contained, opens offline), the functions' logs to
reports/<runId>.logs/.
Exit codes: 0 done, 1 the run failed, 2 invalid options, 129/130/143 hung up/interrupted/terminated.`;

function integer(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

export function parseCliArgs(argv: readonly string[]): CliOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        json: { type: 'boolean' },
        open: { type: 'boolean' },
        'cold-starts': { type: 'boolean' },
        target: { type: 'string' },
        messages: { type: 'string' },
        accounts: { type: 'string' },
        'crash-rate': { type: 'string' },
        'batch-size': { type: 'string' },
        seed: { type: 'string' },
        modes: { type: 'string' },
        concurrency: { type: 'string' },
        'visibility-timeout': { type: 'string' },
        'max-receive-count': { type: 'string' },
        'poison-rate': { type: 'string' },
        'producer-duplicate-rate': { type: 'string' },
        'redelivery-rate': { type: 'string' },
        'throttle-rate': { type: 'string' },
        'work-delay': { type: 'string' },
        'work-delay-rate': { type: 'string' },
        'kill-rate': { type: 'string' },
        stack: { type: 'string' },
        region: { type: 'string' },
        endpoint: { type: 'string' },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };

  const target = text('target') ?? 'embedded';
  if (!(TARGETS as readonly string[]).includes(target)) {
    throw new UsageError(`--target must be one of ${TARGETS.join(', ')}, got "${target}"`);
  }

  const rate = (name: string): number | undefined => {
    const raw = text(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (raw.trim() === '' || !(value >= 0 && value <= 1)) {
      throw new UsageError(`--${name} must be a number from 0 to 1, got "${raw}"`);
    }
    return value;
  };
  const crashRate = rate('crash-rate') ?? DEFAULTS.crashRate;
  const workDelayMs = integer('work-delay', text('work-delay'), 0, 900_000) ?? 0;
  const workDelayRate = rate('work-delay-rate');
  if (workDelayRate !== undefined && workDelayMs === 0) {
    throw new UsageError('--work-delay-rate needs --work-delay MS (how much slower a slow invocation is)');
  }
  const faults: FaultSettings = {
    poisonRate: rate('poison-rate') ?? 0,
    producerDuplicateRate: rate('producer-duplicate-rate') ?? 0,
    redeliveryRate: rate('redelivery-rate') ?? 0,
    throttleRate: rate('throttle-rate') ?? 0,
    workDelayMs,
    workDelayRate: workDelayMs > 0 ? (workDelayRate ?? DEFAULTS.workDelayRate) : 0,
    killRate: rate('kill-rate') ?? 0,
  };

  const modesRaw = text('modes');
  let modes: Mode[] = [...MODE_NAMES];
  if (modesRaw !== undefined) {
    const names = modesRaw
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const unknown = names.filter((name) => !isMode(name));
    if (names.length === 0 || unknown.length > 0) {
      throw new UsageError(
        `--modes takes a comma-separated list of ${MODE_NAMES.join(', ')}; unknown: "${unknown.join(', ') || modesRaw}"`,
      );
    }
    // Always in topology order, so reports of the same modes line up.
    modes = MODE_NAMES.filter((mode) => names.includes(mode));
  }

  const explicit = new Set(Object.keys(values).filter((name) => values[name] !== undefined));
  if (target === 'embedded') {
    const deployedOnly = ['stack', 'region', 'endpoint'].filter((name) => explicit.has(name));
    if (deployedOnly.length > 0) {
      throw new UsageError(`--${deployedOnly[0]} applies to --target aws or localstack, not embedded`);
    }
  } else {
    const faultsHere = EMBEDDED_ONLY_FAULTS.filter((name) => explicit.has(name));
    if (faultsHere.length > 0) {
      throw new UsageError(
        `--${faultsHere[0]} is injected by the local Lambda runtime, so it applies to --target embedded only; ` +
          `on ${target} the event source mapping and DynamoDB are the real ones (--poison-rate and ` +
          '--producer-duplicate-rate work everywhere: the producer injects them)',
      );
    }
    const embeddedOnly = ['concurrency', 'visibility-timeout', 'max-receive-count', 'cold-starts'].filter(
      (name) => explicit.has(name),
    );
    if (embeddedOnly.length > 0) {
      throw new UsageError(
        `--${embeddedOnly[0]} applies to --target embedded only; a deployed stack runs with the settings in ` +
          'contract/topology.ts it was deployed with (change them there and redeploy)',
      );
    }
    if (target === 'aws' && explicit.has('endpoint')) {
      throw new UsageError('--endpoint applies to --target localstack; --target aws always talks to AWS');
    }
  }
  const endpoint = text('endpoint');
  if (endpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(endpoint)) {
    throw new UsageError(`--endpoint must be a URL like http://localhost:4566, got "${endpoint}"`);
  }
  const stackName = text('stack') ?? 'DeliverySemantics';
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new UsageError(
      `--stack must be a CloudFormation stack name (letters, digits, -), got "${stackName}"`,
    );
  }

  const seed = text('seed') ?? Math.random().toString(36).slice(2, 10);
  if (!/^[A-Za-z0-9._:-]{1,40}$/.test(seed)) {
    throw new UsageError(`--seed must be 1–40 of A-Z a-z 0-9 . _ : -, got "${seed}"`);
  }

  const batchSize = integer('batch-size', text('batch-size'), 1, 10_000);
  const concurrency = integer('concurrency', text('concurrency'), 2, 1000);
  return {
    help: values.help === true,
    json: values.json === true,
    open: values.open === true,
    coldStarts: values['cold-starts'] === true,
    target: target as Target,
    stackName,
    region: text('region'),
    endpoint,
    explicit,
    config: {
      messages: integer('messages', text('messages'), 1, 1_000_000) ?? DEFAULTS.messages,
      accounts: integer('accounts', text('accounts'), 1, 100_000) ?? DEFAULTS.accounts,
      crashRate,
      // Unset means each mode's topology batch size (10 today); the report shows what ran.
      batchSize,
      seed,
      modes,
      concurrency,
      visibilityTimeoutSeconds:
        integer('visibility-timeout', text('visibility-timeout'), 3, 43_200) ??
        localVisibilityTimeoutSeconds(batchSize ?? DEFAULTS.batchSize, concurrency ?? LOCAL_MAX_CONCURRENCY),
      maxReceiveCount: integer('max-receive-count', text('max-receive-count'), 1, 1000),
      faults,
    },
  };
}

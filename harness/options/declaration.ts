/**
 * Every command-line option of every entry point, declared once: its kind and range, its default
 * per entry point, the targets that accept it and its help line. The parser (parse.ts), the
 * `--help` texts (help.ts) and docs/options.md (markdown.ts) are all made from this table.
 *
 * Per-mode settings are read from contract/topology.ts and local timing from
 * harness/environments/local-timing.ts, never restated here.
 */
import { DEFAULT_STACK_NAME } from '../../contract/stack-outputs.js';
import { DEFAULT_MODES, MODE_NAMES, MODES, type Mode, type ModeSettings } from '../../contract/topology.js';
import { crashTarget } from '../../modes/kit/crash.js';
import {
  LOCAL_MAX_CONCURRENCY,
  localVisibilityTimeoutSeconds,
  MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS,
} from '../environments/local-timing.js';
import { LOCALSTACK_DEFAULTS } from '../environments/localstack-defaults.js';
import type { EntryPointName } from './entry-points.js';

export const TARGETS = ['embedded', 'localstack', 'aws'] as const;
export type Target = (typeof TARGETS)[number];

/** How an option reads at one entry point. */
export interface Use<V> {
  /** The value when the option is not given. Without one, the entry point decides (`defaultText` says how). */
  readonly default?: V;
  /** The value under `--quick`, at an entry point that has it. */
  readonly quick?: V;
  /** How --help and the docs state the default, where the value alone does not say it all. */
  readonly defaultText?: string;
  /** The help line at this entry point, where it says more than the option's own. */
  readonly help?: string;
  /** The entry point cannot run without it: not giving it is a usage error (no default). */
  readonly required?: true;
}

type Uses<V> = { readonly [E in EntryPointName]?: Use<V> };

/** The experiment's targets that accept an option, and what a refusal on another target says. */
export interface TargetScope {
  readonly only: readonly Target[];
  /** Completes "--<option> …" for a target outside `only`. */
  readonly refusal: (target: Target) => string;
}

interface Common {
  /** What the value looks like in --help (`N`, `R`, `a,b`). */
  readonly placeholder?: string;
  readonly short?: string;
  readonly help: string;
  readonly group: GroupName;
  /** @default every target */
  readonly targets?: TargetScope;
  /** Another option this one needs, given and not 0. */
  readonly requires?: { readonly option: string; readonly why: string };
}

export type OptionDeclaration = Common &
  (
    | { readonly kind: 'flag'; readonly entryPoints: Uses<boolean> }
    | {
        readonly kind: 'integer';
        readonly min: number;
        readonly max: number;
        readonly entryPoints: Uses<number>;
      }
    | { readonly kind: 'rate'; readonly entryPoints: Uses<number> }
    | {
        readonly kind: 'integers';
        readonly min: number;
        readonly max: number;
        readonly entryPoints: Uses<readonly number[]>;
      }
    | { readonly kind: 'rates'; readonly entryPoints: Uses<readonly number[]> }
    | { readonly kind: 'modes'; readonly entryPoints: Uses<readonly Mode[]> }
    | { readonly kind: 'choice'; readonly choices: readonly string[]; readonly entryPoints: Uses<string> }
    | {
        readonly kind: 'text';
        readonly pattern: RegExp;
        /** What the pattern allows, in words. */
        readonly shape: string;
        readonly entryPoints: Uses<string>;
      }
  );

export interface GroupDeclaration {
  readonly heading: string;
  /** Said after the group's options. */
  readonly note?: string;
  /** The note is said only where this option is accepted too (it is about that option). @default always */
  readonly noteWith?: string;
}

/** Where an option stands in --help: each group under its heading, in this order. */
export const GROUPS = {
  target: { heading: 'Targets' },
  deployed: {
    heading: 'Deployed targets (aws, localstack)',
    note:
      'Crash rate, crash seed and batch size are deployment settings there: the run reads and prints them; ' +
      'passing a different --crash-rate or --batch-size is refused with how to redeploy.',
    noteWith: 'crash-rate',
  },
  run: { heading: 'Options' },
  faults: {
    heading:
      'Faults (each drawn per event from --seed, the same schedule for every mode; counted in the report)',
    note:
      'Hot keys: --accounts 1 --concurrency 8 makes transactions conflict on AWS; DynamoDB Local serializes ' +
      'them instead, so locally conflicts come from --throttle-rate. Retries are counted.',
  },
  general: { heading: 'Output and help' },
} as const satisfies Record<string, GroupDeclaration>;

export type GroupName = keyof typeof GROUPS;

/** A setting as contract/topology.ts gives it: the one value every mode shares, or each distinct one. */
function topology(setting: keyof Pick<ModeSettings, 'batchSize' | 'maxConcurrency' | 'maxReceiveCount'>) {
  const values = [...new Set(MODE_NAMES.map((mode) => MODES[mode][setting]))];
  return { largest: Math.max(...values), text: `each mode's in contract/topology.ts: ${values.join('/')}` };
}

const LOCAL_RUNTIME: TargetScope = {
  only: ['embedded'],
  refusal: (target) =>
    `is injected by the local Lambda runtime, so it applies to --target embedded only; on ${target} the ` +
    'event source mapping and DynamoDB are the real ones (--poison-rate and --producer-duplicate-rate work ' +
    'everywhere: the producer injects them)',
};

const EMBEDDED_SETTING: TargetScope = {
  only: ['embedded'],
  refusal: () =>
    'applies to --target embedded only; a deployed stack runs with the settings in contract/topology.ts it ' +
    'was deployed with (change them there and redeploy)',
};

const PROVIDER_FAULT: TargetScope = {
  only: ['embedded'],
  refusal: () =>
    "is drawn by the charge modes' handlers, so on a deployed stack it is a deployment setting: deploy with " +
    '`npx cdk deploy -c providerLostResponseRate=R`',
};

const DEPLOYED: TargetScope = {
  only: ['aws', 'localstack'],
  refusal: () => 'applies to --target aws or localstack, not embedded',
};

const LOCALSTACK: TargetScope = {
  only: ['localstack'],
  refusal: (target) =>
    target === 'aws'
      ? 'applies to --target localstack; --target aws always talks to AWS'
      : `applies to --target localstack, not ${target}`,
};

const ALL_MODES = { default: MODE_NAMES } as const;
/** The modes of a run without `--modes`: the topology's default run (`inDefaultRun`). */
const DEFAULT_RUN_MODES = { default: DEFAULT_MODES } as const;
/**
 * The bench's modes without `--modes`: the default run's, and the two one-write modes whose price
 * issue 15 asks for (entry-upsert, state-upsert). Listed, not derived: a new mode joins when the
 * bench can drive it (a FIFO mode needs its floor to keep each group's order).
 */
const BENCH_MODES: readonly Mode[] = [...DEFAULT_MODES, 'entry-upsert', 'state-upsert', 'fifo-versioned'];

export const OPTIONS = {
  target: {
    kind: 'choice',
    choices: TARGETS,
    placeholder: 'T',
    group: 'target',
    help:
      'where the consumers run. embedded: everything on this machine: fauxqs for SQS, DynamoDB Local (needs ' +
      'Java 17+), the real handler bundles in child processes behind a local Lambda SQS event source mapping. ' +
      'aws: a stack deployed with `npx cdk deploy` to an AWS account, with your AWS credentials (profile, SSO ' +
      'or env) and region. localstack: a stack deployed to LocalStack with `npm run deploy:local` (see ' +
      'localstack/README.md)',
    entryPoints: {
      experiment: { default: 'embedded' },
      redrive: {
        default: 'aws',
        help:
          'where the run was made: aws or localstack. An embedded run cannot be redriven afterwards: its ' +
          'queues and ledger are gone when it ends (use `npm run experiment -- --redrive`)',
      },
    },
  },
  stack: {
    kind: 'text',
    pattern: /^[A-Za-z][A-Za-z0-9-]{0,127}$/,
    shape: 'a CloudFormation stack name (letters, digits, -)',
    placeholder: 'NAME',
    group: 'deployed',
    targets: DEPLOYED,
    help: 'CloudFormation stack name',
    entryPoints: { experiment: { default: DEFAULT_STACK_NAME }, redrive: { default: DEFAULT_STACK_NAME } },
  },
  region: {
    kind: 'text',
    pattern: /^[a-z]{2,4}(-[a-z]+)+-\d+$/,
    shape: 'an AWS region like eu-west-1',
    placeholder: 'REGION',
    group: 'deployed',
    targets: DEPLOYED,
    help: 'AWS region',
    entryPoints: {
      experiment: {
        defaultText: `AWS_REGION or your profile's; ${LOCALSTACK_DEFAULTS.region} for localstack`,
      },
      redrive: {
        defaultText: `AWS_REGION or your profile's; ${LOCALSTACK_DEFAULTS.region} for localstack`,
      },
    },
  },
  endpoint: {
    kind: 'text',
    pattern: /^https?:\/\/[^\s/]+/,
    shape: 'a URL like http://localhost:4566',
    placeholder: 'URL',
    group: 'deployed',
    targets: LOCALSTACK,
    help: 'LocalStack endpoint',
    entryPoints: {
      experiment: { defaultText: LOCALSTACK_DEFAULTS.endpoint },
      redrive: { defaultText: LOCALSTACK_DEFAULTS.endpoint },
    },
  },
  run: {
    kind: 'text',
    pattern: /^[A-Za-z0-9._:-]{1,128}$/,
    shape: 'a run id (1–128 of A-Z a-z 0-9 . _ : -), like 20261130T150406Z-r1-ea4x',
    placeholder: 'RUN',
    group: 'run',
    help: 'the run to redrive, as `npm run experiment` named it (reports/<runId>.json)',
    entryPoints: { redrive: { required: true } },
  },
  messages: {
    kind: 'integer',
    min: 1,
    max: 1_000_000,
    placeholder: 'N',
    group: 'run',
    help: 'messages per mode',
    entryPoints: {
      experiment: { default: 200 },
      sweep: { default: 200, quick: 60, help: 'messages per mode per run' },
      bench: { default: 600, quick: 200, help: 'messages per mode per run' },
      'bench:scale': { default: 1000, help: 'messages of the scale point' },
    },
  },
  accounts: {
    kind: 'integer',
    min: 1,
    max: 100_000,
    placeholder: 'K',
    group: 'run',
    help: 'accounts the amounts are spread over',
    entryPoints: {
      experiment: { default: 10 },
      explore: { defaultText: '2 (1 at --depth 2)', help: "accounts the scenario's events take turns on" },
    },
  },
  'crash-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'run',
    help: "probability that a handler SIGKILLs itself at its mode's crash point, per message and delivery",
    entryPoints: { experiment: { default: 0.02 } },
  },
  'batch-size': {
    kind: 'integer',
    min: 1,
    max: 10_000,
    placeholder: 'B',
    group: 'run',
    help: 'event source mapping batch size; a FIFO mode (fifo-versioned) runs at most 10, with no batching window, as Lambda requires',
    entryPoints: { experiment: { defaultText: topology('batchSize').text } },
  },
  seed: {
    kind: 'text',
    pattern: /^[A-Za-z0-9._:-]{1,40}$/,
    shape: '1–40 of A-Z a-z 0-9 . _ : -',
    placeholder: 'S',
    group: 'run',
    help: 'seeds the manifest (accounts, amounts) and the crash decisions: the same seed reproduces a run',
    entryPoints: { experiment: { defaultText: 'random' } },
  },
  modes: {
    kind: 'modes',
    placeholder: 'a,b',
    group: 'run',
    help: 'modes to run',
    entryPoints: {
      experiment: {
        ...DEFAULT_RUN_MODES,
        defaultText: `${DEFAULT_MODES.join(',')}; with --redrive every mode; on a deployed stack, those of them it deploys`,
      },
      bench: {
        default: BENCH_MODES,
        defaultText: `the default run's modes + ${BENCH_MODES.filter((mode) => !DEFAULT_MODES.includes(mode)).join(', ')}`,
        help: 'modes to measure; a mode with a production shape gets its production row too',
      },
      proofs: { ...ALL_MODES, help: 'modes to prove' },
      explore: { ...ALL_MODES, help: 'modes to explore' },
      redrive: { help: 'modes to redrive', defaultText: "the run's (its manifest in the ledger says which)" },
    },
  },
  concurrency: {
    kind: 'integer',
    min: 2,
    max: 1000,
    placeholder: 'C',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      "batches in flight per mode (the event source mapping's maximum concurrency); one DynamoDB Local " +
      'serves every mode, so more callers only make each batch slower',
    entryPoints: {
      experiment: {
        defaultText: `${LOCAL_MAX_CONCURRENCY}; deployed stacks: ${topology('maxConcurrency').text}`,
      },
    },
  },
  'visibility-timeout': {
    kind: 'integer',
    min: 3,
    max: 43_200,
    placeholder: 'S',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      'local queue visibility timeout in seconds; short, so crashed batches come back quickly; the local ' +
      "function timeout is 2 s less (and the batching window's 1 s above batch 10); a charge mode gets twice " +
      'as long (each record also waits for the payment provider)',
    entryPoints: {
      experiment: {
        defaultText:
          `⌈batch × concurrency / 10⌉ + 3, + 1 above batch 10, at least ${MIN_LOCAL_VISIBILITY_TIMEOUT_SECONDS}: ` +
          `${localVisibilityTimeoutSeconds(topology('batchSize').largest, LOCAL_MAX_CONCURRENCY)} at ` +
          `batch ${topology('batchSize').largest} × concurrency ${LOCAL_MAX_CONCURRENCY}`,
      },
    },
  },
  'max-receive-count': {
    kind: 'integer',
    min: 1,
    max: 1000,
    placeholder: 'N',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help: 'receives before a message moves to its DLQ (a lower value dead-letters poison sooner)',
    entryPoints: { experiment: { defaultText: topology('maxReceiveCount').text } },
  },
  'cold-starts': {
    kind: 'flag',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      'start each execution environment on its first invocation, as on-demand Lambda does (the first ' +
      'batches then all cold-start at once)',
    entryPoints: {
      experiment: { defaultText: "off: every mode's environments are initialised before the first message" },
    },
  },
  redrive: {
    kind: 'flag',
    group: 'run',
    help:
      "after the first drain and verification, move every mode's DLQ back to its source queue as a DLQ " +
      'redrive does (embedded: by copy, with a redriveCount attribute so crash and fault draws differ; ' +
      'aws, localstack: StartMessageMoveTask), drain and verify again; the report leads with the state ' +
      "after the redrive, then the redrive's counts and the first drain (docs/redrive.md)",
    entryPoints: { experiment: {} },
  },
  'redrive-after': {
    kind: 'integer',
    min: 0,
    max: 86_400,
    placeholder: 'S',
    group: 'run',
    requires: { option: 'redrive', why: 'it says when the redrive starts' },
    help: 'seconds from the end of the first drain to the redrive (up to a day: past a marker or key expiry)',
    entryPoints: { experiment: { default: 0, defaultText: '0: as soon as the first drain is verified' } },
  },
  'marker-ttl': {
    kind: 'integer',
    min: 10,
    max: 86_400 * 30,
    placeholder: 'S',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      "how long the dedupe records remember an event (effectively-once's marker, powertools-idempotency's " +
      'record); the age guard refuses events older than this less its margin (docs/retention.md)',
    entryPoints: {
      experiment: { defaultText: 'the deployed default, 30 days (CDK context markerRetentionDays)' },
    },
  },
  'no-age-guard': {
    kind: 'flag',
    group: 'run',
    targets: EMBEDDED_SETTING,
    help:
      'switch off the age guard of the consumers that dedupe: an event older than its dedupe record can ' +
      'remember is applied instead of refused (shows what a late redrive does without it)',
    entryPoints: { experiment: { defaultText: 'guard on: such events are refused (tooOldToDedupe)' } },
  },
  'poison-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    help:
      'the producer sends an event as an invalid body instead (malformed JSON, a missing field, a wrong ' +
      'type, a zero/negative/fractional/huge amount, an unknown field, a body near the 1 MiB limit of SQS); ' +
      'never applied; dead-lettered after the max receive count by the work-first modes, lost by at-most-once',
    entryPoints: { experiment: { default: 0 } },
  },
  'producer-duplicate-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    help:
      'the producer sends an event twice (same event id, a new SQS message), as a retry after a lost ' +
      'SendMessage response does',
    entryPoints: { experiment: { default: 0 } },
  },
  'provider-lost-response-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: PROVIDER_FAULT,
    help:
      'the charge modes only: the payment provider executes a charge and its response is lost; the consumer ' +
      'times out and retries (with the same idempotency key, or without one: a second charge)',
    entryPoints: { experiment: { default: 0 } },
  },
  producer: {
    kind: 'choice',
    choices: ['direct', 'outbox', 'dual-write'],
    placeholder: 'P',
    group: 'run',
    targets: {
      only: ['embedded'],
      refusal: (target) =>
        `runs on --target embedded only: on ${target} the stack deploys the outbox table and its relay ` +
        '(outputs OutboxTableName, ProducerStateTableName), but the harness does not write them yet; ' +
        'leave --producer out (the harness then sends directly)',
    },
    help:
      'how events reach the queues. direct: the harness sends them. dual-write: a producer process commits ' +
      "its own state (an account's pending balance), then sends; outbox: it commits its state and an " +
      'outbox item in one transaction, and a relay publishes the outbox from the DynamoDB stream ' +
      '(docs/side-effects.md)',
    entryPoints: { experiment: { default: 'direct' } },
  },
  'producer-crash-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      '--producer dual-write or outbox: the producer process is SIGKILLed after committing an event, before ' +
      'sending it (the dual write loses it; the outbox has it committed and relays it)',
    entryPoints: { experiment: { default: 0 } },
  },
  'relay-crash-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      "--producer outbox only: the outbox relay is SIGKILLed after sending a chunk, before checkpointing the stream's " +
      'position; below 1',
    entryPoints: { experiment: { default: 0 } },
  },
  'redelivery-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      'the event source mapping delivers a successfully processed record once more, as AWS documents it ' +
      'may (at least once, even without errors)',
    entryPoints: { experiment: { default: 0 } },
  },
  'throttle-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      "a handler's DynamoDB request is throttled, answered with a 5xx, applied with its response lost (the " +
      'SDK retries it with the same ClientRequestToken), or a transaction is cancelled by a conflict; a ' +
      'proxy in front of DynamoDB Local, the handler code unchanged',
    entryPoints: { experiment: { default: 0 } },
  },
  'outage-after': {
    kind: 'integer',
    min: 0,
    max: 3600,
    placeholder: 'S',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    requires: { option: 'outage-for', why: 'how long the outage lasts' },
    help: 'seconds from the first send to the start of a DynamoDB outage (see --outage-for)',
    entryPoints: { experiment: { default: 0 } },
  },
  'outage-for': {
    kind: 'integer',
    min: 0,
    max: 3600,
    placeholder: 'S',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      'every handler request to DynamoDB fails for S seconds, as an unavailable DynamoDB answers (503 ' +
      'ServiceUnavailable, retried by the SDK, then the record fails): valid messages exhaust ' +
      '--max-receive-count and are dead-lettered. A failed record comes back only after the visibility ' +
      'timeout, so the outage fills the DLQ only when it lasts longer than visibility × max receive count',
    entryPoints: { experiment: { default: 0, defaultText: '0: no outage' } },
  },
  'work-delay': {
    kind: 'integer',
    min: 0,
    max: 900_000,
    placeholder: 'MS',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      "a slow invocation spends MS more before its work, and may outlive its messages' visibility timeout: " +
      'the same message is then in two invocations at once',
    entryPoints: { experiment: { default: 0 } },
  },
  'work-delay-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    requires: { option: 'work-delay', why: 'how much slower a slow invocation is' },
    help: 'share of invocations that are slow',
    entryPoints: { experiment: { default: 0.2, defaultText: '0.2 with --work-delay, else 0' } },
  },
  'kill-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      'the environment is SIGKILLed at a random moment of an invocation (a timer, not a code point: also ' +
      'while a transaction is in flight)',
    entryPoints: { experiment: { default: 0 } },
  },
  'batch-sizes': {
    kind: 'integers',
    min: 1,
    max: 10_000,
    placeholder: 'a,b,…',
    group: 'run',
    help: 'batch sizes to try',
    entryPoints: { sweep: { default: [1, 10, 50, 100], quick: [1, 10] } },
  },
  'crash-rates': {
    kind: 'rates',
    placeholder: 'a,b,…',
    group: 'run',
    help: 'crash rates to try',
    entryPoints: { sweep: { default: [0.02, 0.05], quick: [0.02] } },
  },
  repeats: {
    kind: 'integer',
    min: 1,
    max: 100,
    placeholder: 'N',
    group: 'run',
    help: 'runs per setting; repeat r (1, 2, …) uses seed sweep-<r> at every batch size and crash rate',
    entryPoints: { sweep: { default: 2, quick: 1 } },
  },
  repetitions: {
    kind: 'integer',
    min: 1,
    max: 100,
    placeholder: 'N',
    group: 'run',
    help: 'end-to-end and floor runs per grid cell and mode',
    entryPoints: { bench: { default: 3, quick: 1 } },
  },
  scale: {
    kind: 'integers',
    min: 0,
    max: 1_000_000,
    placeholder: 'a,b',
    group: 'run',
    help:
      'effectively-once alone at these numbers of messages, each in a fresh process (0: none; the 100,000 ' +
      'point alone takes about 20 minutes here)',
    entryPoints: { bench: { default: [1000, 10_000, 100_000], quick: [] } },
  },
  'read-cost': {
    kind: 'integers',
    min: 0,
    max: 100_000,
    placeholder: 'a,b',
    group: 'run',
    help:
      "entry-upsert's balance read (the sum of an account's entries) at these numbers of entries per account, " +
      'against one GetItem of a balance item, in a DynamoDB Local of its own (0: none)',
    entryPoints: { bench: { default: [10, 100, 1000, 10_000], quick: [10, 100, 1000] } },
  },
  quick: {
    kind: 'flag',
    group: 'run',
    help: 'a short run',
    entryPoints: {
      sweep: { help: 'a short sweep' },
      bench: {
        help: 'batch 10 × concurrency 5 only, a metered run of 100 messages, read cost up to 1,000 entries (2–3 minutes)',
      },
    },
  },
  events: {
    kind: 'integer',
    min: 1,
    max: 10_000_000,
    placeholder: 'N',
    group: 'run',
    help: 'events per mode in the seeded ledger',
    entryPoints: {
      'bench:verifier': { default: 100_000 },
      explore: { defaultText: '3 (2 at --depth 2)', help: "events in the lab scenario's one batch" },
    },
  },
  resent: {
    kind: 'integer',
    min: 0,
    max: 5,
    placeholder: 'N',
    group: 'run',
    help:
      "the scenario's first N events sent a second time, as messages of their own (a producer's retry): " +
      'the same event id, another message id, in the same batch',
    entryPoints: { explore: { default: 0 } },
  },
  runs: {
    kind: 'integer',
    min: 1,
    max: 1000,
    placeholder: 'N',
    group: 'run',
    help: 'runs per checkout',
    entryPoints: { 'bench:default-run': { default: 10 } },
  },
  compare: {
    kind: 'text',
    pattern: /\S/,
    shape: 'a directory',
    placeholder: 'DIR',
    group: 'run',
    help:
      "another checkout of this project (with node_modules): its runs alternate with this one's, the same " +
      'seeds in the same order, and the ratio of medians is printed',
    entryPoints: { 'bench:default-run': { defaultText: 'none' } },
  },
  'crash-at': {
    kind: 'text',
    pattern: /^[A-Za-z0-9._:-]{1,128}@[1-9][0-9]*$/,
    shape: 'EVENT@RECEIVE, like evt-000000@1',
    placeholder: 'E@N',
    group: 'run',
    help:
      'the delivery to kill (the first delivery of the only event by default); a delivery that never ' +
      'happens makes every verdict NOT PROVED',
    entryPoints: { proofs: { default: crashTarget('evt-000000', 1) } },
  },
  depth: {
    kind: 'integer',
    min: 1,
    max: 2,
    placeholder: 'D',
    group: 'run',
    help:
      'faults per cell: 1, each step once; 2, every ordered pair, the second fault at a step of the ' +
      "redelivery's own trace (cells grow as the square: a smaller default scenario)",
    entryPoints: { explore: { default: 1 } },
  },
  parallel: {
    kind: 'integer',
    min: 1,
    max: 64,
    placeholder: 'N',
    group: 'run',
    help: 'cells run side by side, each its own run and queues (most of a cell is waiting out a visibility timeout)',
    entryPoints: { explore: { default: 8 } },
  },
  cell: {
    kind: 'text',
    pattern: /^[a-z-]+@[1-9]:[^,\s]+(,[a-z-]+@[1-9]:[^,\s]+)?$/,
    shape: 'FAULT@DELIVERY:STEP[,FAULT@DELIVERY:STEP], as a replay command prints it',
    placeholder: 'PLAN',
    group: 'run',
    help: 'run only this cell, and print its trace: the replay command of a cell gives it',
    entryPoints: { explore: { defaultText: 'every cell' } },
  },
  interleavings: {
    kind: 'flag',
    group: 'run',
    help:
      'two invocations in flight at once instead of the fault cells: every schedule of one event delivered ' +
      'twice (two-deliveries), two events on one item (hot-key) and a transaction in doubt (in-doubt); ' +
      "the lab's scenario is 2 events on 1 account",
    entryPoints: { explore: {} },
  },
  schedule: {
    kind: 'text',
    pattern: /^(two-deliveries|hot-key|in-doubt):[A-Za-z=!,-]*$/,
    shape: 'SCENARIO:CHOICE,CHOICE,…, as a replay command prints it',
    placeholder: 'SCHEDULE',
    group: 'run',
    help: 'run only this interleaving schedule (implies --interleavings), and print its steps in two columns',
    entryPoints: { explore: { defaultText: 'every schedule' } },
  },
  scenario: {
    kind: 'text',
    pattern: /\S/,
    shape: 'a file',
    placeholder: 'FILE',
    group: 'run',
    help:
      "explore your own consumer instead of the lab's modes: a module whose default export is a scenario " +
      '(or several) of @sqs-delivery-semantics/explorer; --depth, --parallel and --cell apply to it',
    entryPoints: { explore: { defaultText: "the lab's modes" } },
  },
  check: {
    kind: 'flag',
    group: 'run',
    help: 'write nothing; exit 1 if docs/options.md differs from the declaration',
    entryPoints: { 'docs:options': {} },
  },
  json: {
    kind: 'flag',
    group: 'general',
    help: 'print the report as JSON on stdout, nothing else',
    entryPoints: { experiment: {}, redrive: {}, explore: {} },
  },
  open: {
    kind: 'flag',
    group: 'general',
    help: 'open the HTML report in a browser when the run is done (xdg-open, open or start)',
    entryPoints: { experiment: {} },
  },
  help: {
    kind: 'flag',
    short: 'h',
    group: 'general',
    help: 'show this help',
    entryPoints: {
      experiment: {},
      explore: {},
      sweep: {},
      bench: {},
      'bench:verifier': {},
      'bench:default-run': {},
      proofs: {},
      redrive: {},
      'docs:options': {},
      'bench:scale': {},
    },
  },
} as const satisfies Record<string, OptionDeclaration>;

type Options = typeof OPTIONS;
export type OptionName = keyof Options;

/** The options an entry point accepts. */
export type AcceptedBy<E extends EntryPointName> = {
  [K in OptionName]: E extends keyof Options[K]['entryPoints'] ? K : never;
}[OptionName];

type ValueOf<D> = D extends { kind: 'flag' }
  ? boolean
  : D extends { kind: 'integer' | 'rate' }
    ? number
    : D extends { kind: 'integers' | 'rates' }
      ? readonly number[]
      : D extends { kind: 'modes' }
        ? readonly Mode[]
        : D extends { kind: 'choice'; choices: readonly (infer C)[] }
          ? C
          : string;

type Defaulted<K extends OptionName, E> = Options[K] extends { kind: 'flag' }
  ? true
  : E extends keyof Options[K]['entryPoints']
    ? Options[K]['entryPoints'][E] extends { default: unknown } | { required: true }
      ? true
      : false
    : false;

/** What an entry point reads: each accepted option's value, its default when not given (a required one always is). */
export type OptionValues<E extends EntryPointName> = {
  readonly [K in AcceptedBy<E>]: ValueOf<Options[K]> | (Defaulted<K, E> extends true ? never : undefined);
};

/** The experiment's defaults, for code that builds a configuration without a command line. */
export const DEFAULTS = {
  messages: OPTIONS.messages.entryPoints.experiment.default,
  accounts: OPTIONS.accounts.entryPoints.experiment.default,
  crashRate: OPTIONS['crash-rate'].entryPoints.experiment.default,
  /** Each mode's topology batch size (the largest, where they differ). */
  batchSize: topology('batchSize').largest,
  /** At the default batch size and concurrency; see localVisibilityTimeoutSeconds for others. */
  visibilityTimeoutSeconds: localVisibilityTimeoutSeconds(
    topology('batchSize').largest,
    LOCAL_MAX_CONCURRENCY,
  ),
  workDelayRate: OPTIONS['work-delay-rate'].entryPoints.experiment.default,
} as const;

import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { MODE_NAMES } from './contract/topology.js';
import { SOURCE_CONDITION } from './stack/bundling.js';
import { TimeBudgets } from './test/support/time-budgets.js';

// The verifier reads its configuration at module scope, and a test may invoke a mode's handler
// (which reads its own when first invoked): unit tests provide a complete, valid environment.
const handlerEnv = {
  TABLE_NAME: 'ledger-test',
  IDEMPOTENCY_TABLE_NAME: 'idempotency-test',
  QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/at-most-once',
  CRASH_RATE: '0',
  CRASH_SEED: 'unit',
  CRASH_AT: 'none',
  MARKER_TTL_SECONDS: String(30 * 24 * 3600),
  AGE_GUARD: 'on',
  PROVIDER_URL: 'http://127.0.0.1:9/',
  PROVIDER_SIGN: 'off',
  PROVIDER_LOST_RESPONSE_RATE: '0',
  DEAD_LETTER_QUEUE_URLS: JSON.stringify(
    Object.fromEntries(
      MODE_NAMES.map((mode) => [mode, `https://sqs.eu-west-1.amazonaws.com/123456789012/${mode}-dlq`]),
    ),
  ),
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'unit',
  AWS_SECRET_ACCESS_KEY: 'unit',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

// The suite runs on Node 20 as well as 22 and 24. The SDK's notice about its future Node 22 floor
// is known and would only bury test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/**
 * Whole-run files two at a time: most of a run is waiting (visibility timeouts, an outage, the
 * explorer's function timeouts), each has its own emulators on free ports and its own run ids, and
 * no check looks beyond what its own run started (cli.test.ts follows its own process tree).
 * Measured on 2 cores: one at a time 371 s, two 160 s, three 144 s with a run's invocation
 * timing out (the clean experiment's exactness needs none): two.
 */
const RUNS_SIDE_BY_SIDE = 2;

/**
 * Test files that run whole experiments (every mode's consumers over fauxqs and DynamoDB Local, then
 * the verifier), or the CLIs that do: their assertions depend on timing (visibility overruns,
 * in-progress expiry, a SIGTERM mid-drain, exact counts under a function timeout). They run after
 * everything else, two at a time (RUNS_SIDE_BY_SIDE). Every other file under test/integration/ is a
 * component test and runs beside others: a new file that runs a whole experiment belongs here.
 */
const RUNS = [
  'test/integration/experiment.test.ts',
  'test/integration/html-report.test.ts',
  'test/integration/proofs.test.ts',
  'test/integration/cli.test.ts',
  'test/integration/redrive.test.ts',
  'test/integration/script-runs.test.ts',
  // `npm run explore` as child processes, CPU-bound (cells side by side on one DynamoDB Local):
  // beside the component files they would slow those past their timeouts.
  'test/integration/explore.test.ts',
];

/**
 * The long runs, kept out of `npm test` and CI (`npm run test:soak`, docs/testing.md says when to
 * run it): the fault matrix, the bench's quick run, and the fault property test's schedules (the
 * pinned outage runbook and random ones; out of `npm test` since its 5 minutes were spent: the
 * redrive runbook, redrive.test.ts, keeps an outage and its redrive in CI).
 */
const SOAK = [
  'test/integration/faults.test.ts',
  'test/integration/bench.test.ts',
  'test/integration/fault-properties.test.ts',
  // A mode added on a copy of the project, type-checked and proved (the component layer,
  // cores.test.ts, runs every mode's cells in npm test).
  'test/integration/new-mode.test.ts',
  // `npm run proofs` for every mode (in npm test: two modes, each kind of verdict once).
  'test/integration/proofs.test.ts',
  // The synthesized assembly with -c modes=all, and `npm run assembly` as a process (npm test runs
  // the default modes and the mutations: test/integration/assembly.test.ts).
  'test/integration/assembly-all.test.ts',
  // `npm run explore -- --interleavings`, every mode's every schedule (npm test: two-deliveries for
  // three modes in cores.test.ts, the API's cases in explore-api.test.ts).
  'test/integration/explore-interleavings.test.ts',
];

/**
 * The unit files with a long form under test:soak, in the unit project's environment: the
 * verifier's per-event detail at its cap, 20,000 events × every mode (npm test: a tenth, scaled).
 */
const SOAK_UNIT = ['test/unit/verifier/verifier.test.ts'];
/**
 * Seconds each whole-run file may take, by project and file (the property test runs five times, in
 * `soak` only), from a fresh clone's .ci/run on the 2-core machine (97d0418: experiment 31,
 * property 66, page 35, proofs 37, cli 23, redrive 51, scripts 20 + the bench smoke's 13, explore
 * 20 s) with some room. The `runs` ones add up to twice that phase's wall budget (two files at a
 * time, PHASE_BUDGETS). Printed against the real times at the end; never a failure.
 */
const TIME_BUDGETS_SECONDS = {
  'runs test/integration/experiment.test.ts': 40,
  'runs test/integration/html-report.test.ts': 40,
  'runs test/integration/proofs.test.ts': 40,
  'runs test/integration/cli.test.ts': 30,
  'runs test/integration/redrive.test.ts': 60,
  'runs test/integration/script-runs.test.ts': 40,
  'runs test/integration/explore.test.ts': 25,
  'soak test/integration/faults.test.ts': 120,
  'soak test/integration/bench.test.ts': 140,
  'soak test/integration/fault-properties.test.ts': 450,
  'soak test/integration/new-mode.test.ts': 40,
  'soak test/integration/proofs.test.ts': 60,
  // 2026-12-05: modes=all 47 s, `npm run assembly` (its synth and the deployed driver's minute of quiet) 96 s.
  'soak test/integration/assembly-all.test.ts': 200,
  // 2026-12-05 at 81505c7: 5,505 schedules in 403 s.
  'soak test/integration/explore-interleavings.test.ts': 600,
};

/**
 * Wall seconds per phase of `npm test`, which add up to its 300 s target with the type-check and
 * lint before them (about 25 s): the cheap projects (78–80 s measured at bf7d525, 94 s with a fresh
 * clone's cold caches), then the whole runs two at a time (149–166 s), their files' budgets shared
 * by two. Printed at the end; never a failure.
 */
const RUNS_FILE_BUDGETS = Object.entries(TIME_BUDGETS_SECONDS).filter(([key]) => key.startsWith('runs '));
const PHASE_BUDGETS = [
  { name: 'cheap projects (unit, infra, component)', projects: ['unit', 'infra', 'component'], seconds: 100 },
  {
    name: 'whole runs (runs)',
    projects: ['runs'],
    seconds: RUNS_FILE_BUDGETS.reduce((sum, [, seconds]) => sum + seconds, 0) / RUNS_SIDE_BY_SIDE,
  },
];

/** The property test's schedules under test:soak: the runbook and four random ones. */
const SOAK_PROPERTY_RUNS = '5';

/**
 * Four files at a time on the (2-core) machines this runs on: component files spend most of their
 * time waiting (visibility timeouts, batching windows, child processes starting), and each isolates
 * its data (its own emulators, or fresh queues and tables: prefixed ones on the component files'
 * shared DynamoDB Local; free ports). Measured on 2 cores at
 * 72bdee5 (infra without isolation): three at a time 91 s, four 82 s, five 92 s. Groups run one
 * after the other: the cheap ones first.
 */
const CHEAP = { groupOrder: 0, maxWorkers: 4 } as const;

/**
 * Inside a group Vitest starts the projects in name order (component, infra, unit). Start infra
 * first instead: its real `cdk synth` is the longest of the cheap files, and started last it would
 * run alone at the end; the many short unit files go last, to fill the gaps.
 */
const PROJECT_ORDER = ['infra', 'component', 'unit', 'runs', 'soak', 'soak-unit'];

/**
 * The cheap files that take longest (measured, 10–30 s each beside others), started first,
 * whatever their project and whatever Vitest knows: a fresh clone (CI) has no timings, and Vitest
 * would order by file size, which started the mapping's fault tests last and alone. Ranked across
 * projects, not within each: ranked within, a long unit file would start last and run alone at the
 * end. The rest keep Vitest's order (longest first once it has timings, largest file first before).
 */
const LONGEST_CHEAP_FILES = [
  // npm pack, npm ci from the cache, then tsc, cdk synth, the handler and the service's own explorer
  // tests side by side (about 45 s, 85 s beside the other files): first, so the rest runs beside it.
  'test/integration/packed-install.test.ts',
  // The synthesized assembly: one CLI synth (CPU, 10 s), then deployments that mostly wait (about
  // 30 s alone, 50 s beside the others): early, or it runs alone at the end of the phase.
  'test/integration/assembly.test.ts',
  // The component layer per core: in process and CPU-bound (every mode's cells side by side),
  // started first, beside the mapping's tests, which mostly wait. Three runs of the cheap projects
  // with it were 89–92 s, no cell timed out.
  'test/integration/cores.test.ts',
  // The explorer's API, in process: the five-order scenario, a mutant core, broken consumers.
  'test/integration/explore-api.test.ts',
  'test/integration/event-source-mapping.test.ts',
  'test/integration/event-source-mapping-faults.test.ts',
  'test/integration/event-source-mapping-fifo.test.ts',
  'test/integration/deployed-environment.test.ts',
  'test/integration/cli-options.test.ts',
  'test/integration/scripts.test.ts',
  'test/integration/verifier.test.ts',
  // Two refusals of `cdk synth` (the full synth is assembly.test's).
  'test/infra/synth.test.ts',
];

class InfraFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => PROJECT_ORDER.indexOf(spec.project.name);
    const long = (spec: TestSpecification) => {
      const index = LONGEST_CHEAP_FILES.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return index === -1 ? LONGEST_CHEAP_FILES.length : index;
    };
    return (await super.sort(files)).sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        long(a) - long(b) ||
        rank(a) - rank(b),
    );
  }
}

/**
 * This repository's packages resolve to their sources (stack/bundling.ts, SOURCE_CONDITION), in every
 * project: inline projects do not inherit the root's resolve options. Vitest's own defaults are
 * kept, since giving any replaces them: Vite's server conditions without `module`, because Vitest
 * also hands these to Node for the dependencies it does not transform, and `module` would pick
 * bundler-only builds (the AWS SDK's dist-es) that Node cannot load.
 */
const SERVER_CONDITIONS = [SOURCE_CONDITION, ...defaultServerConditions.filter((c) => c !== 'module')];
const SOURCE_RESOLVE = {
  resolve: { conditions: SERVER_CONDITIONS },
  ssr: { resolve: { conditions: SERVER_CONDITIONS } },
  // Where Vitest runs a project's globalSetup (test/support/shared-dynamodb.setup.ts).
  environments: { __vitest__: { resolve: { conditions: SERVER_CONDITIONS } } },
};

export default defineConfig({
  ...SOURCE_RESOLVE,
  test: {
    sequence: { sequencer: InfraFirst },
    reporters: ['default', new TimeBudgets(TIME_BUDGETS_SECONDS, PHASE_BUDGETS)],
    projects: [
      {
        ...SOURCE_RESOLVE,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'packages/*/src/**/*.test.ts'],
          env: handlerEnv,
          // One module graph per worker, not per file (Vitest's "disable isolation" recipe): the
          // SDK and the handlers are imported once per worker, which halves the project's CPU time
          // (33 s to 18 s measured). Safe because the unit files undo what they change (fake timers,
          // stubbed env), but for the relay test's QUEUE_URLS, which only the relay reads; the two
          // handlers that read env at module scope are imported by their own file only, and
          // `--sequence.shuffle` runs were green. A file that needs its own module graph: a component test.
          isolate: false,
          maxWorkers: CHEAP.maxWorkers,
          sequence: { groupOrder: CHEAP.groupOrder },
        },
      },
      {
        ...SOURCE_RESOLVE,
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          // As in unit: aws-cdk-lib and cdk-nag imported once per worker, not once per file (about
          // 3 CPU-s each). Each test builds its own App; nothing here patches a module.
          isolate: false,
          // A synth takes seconds alone and longer beside an emulator starting.
          testTimeout: 120_000,
          hookTimeout: 120_000,
          maxWorkers: CHEAP.maxWorkers,
          sequence: { groupOrder: CHEAP.groupOrder },
        },
      },
      {
        ...SOURCE_RESOLVE,
        test: {
          // Emulators, the local Lambda runtime and event source mapping, the fault proxy, the
          // verifier and the deployed driver against the emulators, kill cleanup, the CLI's options,
          // and the component layer per core (cores.test.ts).
          name: 'component',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...RUNS, ...SOAK],
          // One DynamoDB Local for the files that need only tables (test/support/shared-dynamodb.ts).
          globalSetup: ['test/support/shared-dynamodb.setup.ts'],
          // As in unit and infra: the SDK, fauxqs and the harness imported once per worker, not once
          // per file (the workers' CPU went from 102 to 88 s). Each file starts and stops what it
          // uses, on its own ports, queues and table prefixes; deployed-environment restores the
          // clients it mocks; no file mocks a module or resets the module graph (emulators.test points
          // the fauxqs check at an unpatched copy instead). A file that needs its own module graph: runs.
          isolate: false,
          testTimeout: 240_000,
          hookTimeout: 120_000,
          maxWorkers: CHEAP.maxWorkers,
          sequence: { groupOrder: CHEAP.groupOrder },
        },
      },
      {
        ...SOURCE_RESOLVE,
        test: {
          name: 'runs',
          include: RUNS,
          testTimeout: 240_000,
          hookTimeout: 120_000,
          maxWorkers: RUNS_SIDE_BY_SIDE,
          sequence: { groupOrder: 1 },
        },
      },
      {
        ...SOURCE_RESOLVE,
        test: {
          name: 'soak',
          include: SOAK,
          // SOAK: a file in both projects runs its long form here.
          env: { SOAK: '1', FAULT_PROPERTY_RUNS: process.env.FAULT_PROPERTY_RUNS ?? SOAK_PROPERTY_RUNS },
          testTimeout: 240_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        ...SOURCE_RESOLVE,
        test: {
          name: 'soak-unit',
          include: SOAK_UNIT,
          env: { ...handlerEnv, SOAK: '1' },
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});

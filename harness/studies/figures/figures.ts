/**
 * Every table of measured figures in the docs: which summary under docs/figures/ it is rendered
 * from, the command that measures it, the code it measures (its staleness), and where it goes.
 * `npm run docs:figures` renders them; test/unit/docs-figures.test.ts holds the docs to them.
 */
import { DEFAULT_MODES, MODE_NAMES } from '../../../contract/topology.js';
import { DEFAULTS } from '../../options/declaration.js';
import type { ExperimentReport } from '../../run/experiment.js';
import type { BenchReport } from '../benchmarks/report.js';
import type { ExploreReport } from '../explore/report.js';
import {
  benchFiguresOf,
  coreCostTable,
  productionShapeTable,
  readmeCostTable,
  throughputCostTable,
} from './bench-tables.js';
import {
  exploreCellsOf,
  exploreCellsTable,
  exploreInterleavingsOf,
  exploreInterleavingsTable,
} from './explore-tables.js';
import type { Provenance } from './provenance.js';
import {
  type DefaultRunReport,
  defaultRunTable,
  defaultRunTimesOf,
  sampleRunOf,
  sampleRunTable,
} from './run-tables.js';
import { type TestingTimes, testingTimesTable } from './testing-times.js';

interface Figure<R, D> {
  /** The command whose report the summary is made from (the caption's). */
  readonly command: string;
  /** What the report is: where the command writes it. */
  readonly report: string;
  /** The code its figures depend on: a change under any of these makes them stale. */
  readonly code: readonly string[];
  /** Why the report is not the command's (another seed, a quick bench, …), or undefined. */
  readonly refuse: (report: R) => string | undefined;
  /** The summary's data, from the command's report: small enough to commit. */
  readonly summarize: (report: R) => D;
  /** Each block of the docs it renders (`<!-- figure: NAME -->`), by name. */
  readonly blocks: Readonly<Record<string, (data: D) => string>>;
}

/** A figure with its report and data types forgotten, so that the registry can hold every kind. */
export type AnyFigure = Figure<unknown, unknown>;

// The one place the types are forgotten: each figure's summarize and blocks agree on D by construction.
const figure = <R, D>(definition: Figure<R, D>): AnyFigure => definition as unknown as AnyFigure;

/** What the lab's runs measure: the consumers, the cores, the verifier, the local runtime, the driver. */
const RUN_CODE = [
  'contract/',
  'modes/',
  'verifier/',
  'services/',
  'packages/consumer-cores/src/',
  'stack/bundling.ts',
  'harness/local-aws/',
  'harness/environments/',
  'harness/run/',
  'harness/commands/run-experiment.ts',
  'harness/commands/cli-args.ts',
  'harness/options/declarations/',
  'package-lock.json',
];

/** What the explorer's figures measure: the modes and the cores through the explorer, on the emulators. */
const EXPLORE_CODE = [
  'contract/',
  'modes/',
  'verifier/',
  'services/',
  'packages/consumer-cores/src/',
  'packages/explorer/src/',
  'packages/explorer/patches/',
  'harness/local-aws/',
  'harness/environments/',
  'harness/studies/explore/',
  'package-lock.json',
];

/** Whether a report's values are those the figure's command sets, naming the first that is not. */
function differs(what: string, actual: unknown, expected: unknown): string | undefined {
  return JSON.stringify(actual) === JSON.stringify(expected)
    ? undefined
    : `its ${what} is ${JSON.stringify(actual)}, not ${JSON.stringify(expected)}`;
}

export const FIGURES = {
  'sample-run': figure({
    command: 'npm run experiment -- --seed d3',
    report: 'reports/<runId>.json',
    code: RUN_CODE,
    refuse: ({ config }: ExperimentReport) =>
      differs('seed', config.seed, 'd3') ??
      differs(
        'settings',
        [config.messages, config.crashRate, config.modes],
        [DEFAULTS.messages, DEFAULTS.crashRate, DEFAULT_MODES],
      ),
    summarize: (report: ExperimentReport) => sampleRunOf(report),
    blocks: { 'sample-run': sampleRunTable },
  }),
  'default-run': figure({
    command: 'npm run bench:default-run -- --runs 5',
    report: 'reports/bench-default-run-<timestamp>.json',
    code: [...RUN_CODE, 'harness/commands/run-bench-default-run.ts'],
    refuse: (report: DefaultRunReport) =>
      differs('runs', report.runs, 5) ?? differs('experiment options', report.extraArgs, []),
    summarize: defaultRunTimesOf,
    blocks: { 'default-run': defaultRunTable },
  }),
  bench: figure({
    command: 'npm run bench -- --scale 0 --read-cost 0',
    report: 'reports/bench-<timestamp>.json',
    code: [...RUN_CODE, 'harness/studies/benchmarks/', 'harness/commands/run-bench.ts'],
    refuse: (report: BenchReport) =>
      differs('kind', report.kind, 'full') ?? differs('scale points', report.scale, []),
    summarize: (report: BenchReport) => benchFiguresOf(report),
    blocks: {
      'bench/throughput-cost': throughputCostTable,
      'bench/readme-cost': readmeCostTable,
      'bench/production-shapes': productionShapeTable,
      'bench/core-costs': coreCostTable,
    },
  }),
  'explore-cells': figure({
    command: 'npm run explore',
    report: 'reports/explore-<timestamp>.json',
    code: EXPLORE_CODE,
    refuse: (report: ExploreReport) =>
      differs('kind', report.interleavings ?? false, false) ??
      differs('depth', report.depth, 1) ??
      differs(
        'modes',
        report.modes.map((mode) => mode.mode),
        MODE_NAMES,
      ),
    summarize: (report: ExploreReport) => exploreCellsOf(report),
    blocks: { 'explore/cells': exploreCellsTable },
  }),
  'explore-interleavings': figure({
    command: 'npm run explore -- --interleavings',
    report: 'reports/explore-<timestamp>.json',
    code: EXPLORE_CODE,
    refuse: (report: ExploreReport) =>
      differs('kind', report.interleavings ?? false, true) ??
      differs(
        'modes',
        report.modes.map((mode) => mode.mode),
        MODE_NAMES,
      ),
    summarize: (report: ExploreReport) => exploreInterleavingsOf(report),
    blocks: { 'explore/interleavings': exploreInterleavingsTable },
  }),
  'testing-times': figure({
    command: 'git clone … && .ci/run',
    report:
      "a JSON of the times a fresh clone's .ci/run printed (harness/studies/figures/testing-times.ts, TestingTimes)",
    code: ['test/', 'vitest.config.ts', 'package.json', 'package-lock.json', '.ci/run'],
    refuse: () => undefined,
    // Its report is already the summary: the times, taken from the run's output.
    summarize: (times: TestingTimes) => times,
    blocks: { 'testing/times': testingTimesTable },
  }),
} as const satisfies Record<string, AnyFigure>;

export type FigureName = keyof typeof FIGURES;

export const FIGURE_NAMES = Object.keys(FIGURES) as FigureName[];

/** A summary under docs/figures/: where its data came from, and the data. */
export interface FigureSummary {
  readonly provenance: Provenance;
  readonly data: unknown;
}

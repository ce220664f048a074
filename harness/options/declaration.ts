/**
 * Every command-line option of every entry point, declared once: its kind and range, its default
 * per entry point, the targets that accept it and its help line. The parser (parse.ts), the
 * `--help` texts (help.ts) and docs/options.md (markdown.ts) are all made from this table, which
 * is assembled here from the tables in declarations/, one per command or concern.
 *
 * Per-mode settings are read from contract/topology.ts and local timing from
 * harness/environments/local-timing.ts, never restated here.
 */
import { DEFAULT_MODES, type Mode } from '../../contract/topology.js';
import { LOCAL_MAX_CONCURRENCY, localVisibilityTimeoutSeconds } from '../environments/local-timing.js';
import { BENCH_OPTIONS } from './declarations/bench.js';
import { DOCS_OPTIONS } from './declarations/docs-options.js';
import { EXPERIMENT_OPTIONS } from './declarations/experiment.js';
import { EXPLORE_OPTIONS } from './declarations/explore.js';
import { FAULT_OPTIONS } from './declarations/faults.js';
import { OUTPUT_AND_HELP_OPTIONS } from './declarations/output-and-help.js';
import { PROOFS_OPTIONS } from './declarations/proofs.js';
import { REDRIVE_OPTIONS } from './declarations/redrive.js';
import { SWEEP_OPTIONS } from './declarations/sweep.js';
import { TARGET_OPTIONS } from './declarations/targets.js';
import { topologySetting } from './declarations/topology-setting.js';
import type { OptionDeclaration } from './declarations/types.js';
import { WORKLOAD_OPTIONS } from './declarations/workload.js';
import type { EntryPointName } from './entry-points.js';

export { GROUPS, type GroupDeclaration, type GroupName } from './declarations/groups.js';
export {
  type OptionDeclaration,
  TARGETS,
  type Target,
  type TargetScope,
  type Use,
} from './declarations/types.js';

/**
 * Every option, in the order each entry point's --help and docs/options.md list the options it
 * accepts: a table's place here is its options' place there. A name declared twice would be lost.
 */
export const OPTIONS = {
  ...TARGET_OPTIONS,
  ...REDRIVE_OPTIONS,
  ...WORKLOAD_OPTIONS,
  ...EXPERIMENT_OPTIONS,
  ...FAULT_OPTIONS,
  ...SWEEP_OPTIONS,
  ...BENCH_OPTIONS,
  ...PROOFS_OPTIONS,
  ...EXPLORE_OPTIONS,
  ...DOCS_OPTIONS,
  ...OUTPUT_AND_HELP_OPTIONS,
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
  batchSize: topologySetting('batchSize').largest,
  /** At the default batch size and concurrency; see localVisibilityTimeoutSeconds for others. */
  visibilityTimeoutSeconds: localVisibilityTimeoutSeconds(
    topologySetting('batchSize').largest,
    LOCAL_MAX_CONCURRENCY,
    DEFAULT_MODES.length,
  ),
  workDelayRate: OPTIONS['work-delay-rate'].entryPoints.experiment.default,
} as const;

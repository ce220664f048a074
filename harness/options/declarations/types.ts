/** What an option declaration says: its kind and range, its use per entry point, the targets that take it. */
import type { Mode } from '../../../contract/topology.js';
import type { EntryPointName } from '../entry-points.js';
import type { GroupName } from './groups.js';

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

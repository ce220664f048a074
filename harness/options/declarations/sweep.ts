/** The sweep's own options: the batch sizes and crash rates it tries, and how often. */
import type { OptionDeclaration } from './types.js';

export const SWEEP_OPTIONS = {
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
} as const satisfies Record<string, OptionDeclaration>;

/** The bench commands' own options, and --quick and --events, which the sweep and explorer share. */
import type { OptionDeclaration } from './types.js';

export const BENCH_OPTIONS = {
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
} as const satisfies Record<string, OptionDeclaration>;

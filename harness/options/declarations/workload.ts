/** A run's workload: messages, accounts, crash rate, batch size, seed, modes (some other commands' too). */
import { DEFAULT_MODES, MODE_NAMES, type Mode } from '../../../contract/topology.js';
import { topologySetting } from './topology-setting.js';
import type { OptionDeclaration } from './types.js';

const ALL_MODES = { default: MODE_NAMES } as const;
/** The modes of a run without `--modes`: the topology's default run (`inDefaultRun`). */
const DEFAULT_RUN_MODES = { default: DEFAULT_MODES } as const;
/**
 * The bench's modes without `--modes`: the default run's, and the two one-write modes whose price
 * issue 15 asks for (entry-upsert, state-upsert). Listed, not derived: a new mode joins when the
 * bench can drive it (a FIFO mode needs its floor to keep each group's order).
 */
const BENCH_MODES: readonly Mode[] = [...DEFAULT_MODES, 'entry-upsert', 'state-upsert', 'fifo-versioned'];

export const WORKLOAD_OPTIONS = {
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
    entryPoints: { experiment: { defaultText: topologySetting('batchSize').text } },
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
} as const satisfies Record<string, OptionDeclaration>;

/**
 * Every command that reads options: how it is run, what it does, and what it says around its
 * options in `--help` and docs/options.md. The options themselves are in declaration.ts.
 */
export interface EntryPoint {
  /** How a user runs it, up to the options (`npm run sweep --`). */
  readonly command: string;
  /** What it does, in one line (docs/options.md). */
  readonly summary: string;
  /** Paragraphs of `--help` before the options. */
  readonly description?: string;
  /** Paragraphs of `--help` after the options: what it writes, and so on. */
  readonly footer?: string;
  /** What each exit code means. */
  readonly exitCodes: string;
  /** Arguments after a lone `--` go to another command, unread: what they are for. */
  readonly passThrough?: { readonly usage: string; readonly help: string };
  /** Run by another entry point, not by a user. */
  readonly internal?: string;
}

const STANDARD_EXIT_CODES = '0 done, 1 the run failed, 2 invalid options.';

export const ENTRY_POINTS = {
  experiment: {
    command: 'npm run experiment --',
    summary:
      'one run of the experiment: every mode under injected crashes and faults, counted by the verifier',
    description: `Runs the delivery-semantics experiment: produces N messages per mode, lets each mode's consumer
process them (with injected crashes), waits until every queue is drained, and prints what the
verifier counted: applied once, duplicated, lost, dead-lettered, and whether the money adds up.`,
    footer: `Every run writes reports/<runId>.json and reports/<runId>.html (a page with a cell per message per
mode, timelines and the table; self-contained, opens offline), the functions' logs to
reports/<runId>.logs/.`,
    exitCodes: '0 done, 1 the run failed, 2 invalid options, 129/130/143 hung up/interrupted/terminated.',
  },
  sweep: {
    command: 'npm run sweep --',
    summary: 'the batch-size trade-off: whole embedded runs over batch sizes and crash rates, as charts',
    description: `Runs the embedded experiment over batch sizes and crash rates with fixed seeds: repeat r (1, 2, …)
uses seed sweep-<r> at every batch size and crash rate, so the same events crash everywhere.`,
    footer: `Each run is a whole embedded experiment (a few tens of seconds; large batches with crashes take
longer: a crash fails the whole batch). Writes reports/sweep-<timestamp>.json and .html.`,
    exitCodes: STANDARD_EXIT_CODES,
  },
  bench: {
    command: 'npm run bench --',
    summary: "what each mode costs: throughput against the handler's floor, requests and dollars, scale",
    description: `Measures each mode on this machine: end to end over a grid of batch size × concurrency (batch 1,
10, 100 × concurrency 2, 5) against the same handler code straight at DynamoDB Local, a metered
run (requests, capacity units, US$ per million messages), and effectively-once at scale.`,
    footer: 'Writes reports/bench-<timestamp>.json and prints the table.',
    exitCodes: '0 done, 1 the bench failed or a scale point did, 2 invalid options.',
  },
  'bench:verifier': {
    command: 'npm run bench:verifier --',
    summary: 'the verifier at scale: seeds a ledger, times the verifier and checks its counts',
    description: `Seeds one run's ledger in DynamoDB Local with N events per mode (1% of them applied twice, as
duplicates), invokes the verifier bundle in a local execution environment, reports its time and
peak memory, and checks its counts against what was seeded.`,
    exitCodes: '0 the counts match, 1 they do not (or the run failed), 2 invalid options.',
  },
  'bench:default-run': {
    command: 'npm run bench:default-run --',
    summary:
      'times the default `npm run experiment` several times, each run checked for timeouts and signatures',
    description: `Runs \`npm run experiment -- --json\` N times in a row, each in a fresh process, and prints per run:
wall time, the phases, timeouts, visibility overruns, and whether the modes kept their
signatures: no impossible count (the table's ! marks), and with crashes at-most-once loses,
at-least-once duplicates, effectively-once is exact, Powertools duplicates. Then the median wall
time.`,
    footer: 'Writes reports/bench-default-run-<timestamp>.json.',
    exitCodes:
      '0 every run clean, 1 a run failed, timed out an invocation, overran a visibility timeout or broke a signature, 2 invalid options.',
    passThrough: {
      usage: '[-- experiment options]',
      help: "Options after a lone -- go to every experiment (e.g. -- --seed d3 to fix the seed); they are checked against `npm run experiment`'s options first.",
    },
  },
  proofs: {
    command: 'npm run proofs --',
    summary: "one message per mode, its delivery killed at the mode's crash point: a verdict per mode",
    description: `Kills the real handler process at each mode's crash point for one chosen delivery of a
single message, drains, and prints a verdict per mode computed from the ledger.`,
    exitCodes: '0 every verdict PROVED, 1 one was not (or the run failed), 2 invalid options.',
  },
  redrive: {
    command: 'npm run redrive --',
    summary: "a finished deployed run's DLQs moved back: verified before, redriven, drained, verified again",
    description: `Redrives a run that has ended on a deployed stack (--target aws or localstack), as the last step of
the runbook in docs/redrive.md: asks the verifier what the run looks like now, moves each mode's
non-empty DLQ back to its source queue with SQS's StartMessageMoveTask, waits until every queue is
drained, asks the verifier again, and prints the table before and the table after the redrive.
An embedded run cannot be redriven afterwards (its emulators are gone when it ends): use
\`npm run experiment -- --redrive\`.`,
    footer: `Writes reports/<runId>-redrive.json. The move task moves everything in a DLQ, earlier runs'
messages too (a DLQ keeps them 14 days): they are counted as redriven, and applied to their own
runs.`,
    exitCodes:
      '0 done, 1 the redrive failed (or the run is not in the stack), 2 invalid options, 129/130/143 hung up/interrupted/terminated.',
  },
  explore: {
    command: 'npm run explore --',
    summary:
      'every crash point: each consumer faulted at every step it takes, its promise checked in every cell',
    description: `Explores each mode's consumer at every step it takes, through the explorer package
(packages/explorer) a team's tests call on its own consumer. A clean run of a small scenario (one
batch) records the trace: every attempt of every request to DynamoDB, SQS and the payment
provider, and the acknowledgement. Then one cell per step and fault, with exactly that one fault
(killed before the attempt, its response lost, lost and then killed, lost with the error seen by
the handler, the acknowledgement not applied), and one per retry cell (a lost response, then the
client's retry lost again, lost and killed, or lost with the error seen), drained through
redeliveries and the DLQ, and counted by the verifier by event id. The consumers run in this
process against fauxqs and DynamoDB Local. With --scenario FILE, your own scenario instead.`,
    footer: `Prints a matrix per mode (the promise above it, steps down, faults across, the retry cells
below, what each fault means, the broken cells with their replays) and writes
reports/explore-<timestamp>.json and .html (each cell's trace and replay on hover).`,
    exitCodes:
      "0 every mode's promise (or the scenario's invariant) held in every cell, 1 one broke (or the exploration failed), 2 invalid options.",
  },
  'docs:options': {
    command: 'npm run docs:options --',
    summary: 'writes docs/options.md from the option declaration (harness/options/)',
    exitCodes: '0 written (or, with --check, up to date), 1 out of date or not written, 2 invalid options.',
  },
  'docs:figures': {
    command: 'npm run docs:figures --',
    summary: "renders the docs' tables of measured figures from the summaries under docs/figures/",
    description: `Each table of measured figures in the README and docs/ sits between <!-- figure: NAME --> and
<!-- /figure -->, rendered from a small summary committed under docs/figures/: the run's date,
commit, machine and command, and a fingerprint of the code it measured. A table whose code has
changed since is captioned stale. To re-measure: run the figure's command, then --record it.`,
    exitCodes:
      '0 rendered (or, with --check, up to date), 1 out of date or a summary could not be recorded, 2 invalid options.',
  },
  'bench:scale': {
    command: 'tsx harness/studies/benchmarks/scale.ts',
    summary: 'one scale point of the bench: effectively-once alone at N messages, in a process of its own',
    internal: 'run by `npm run bench`, one process per scale point, so its peak memory is its own',
    exitCodes: STANDARD_EXIT_CODES,
  },
} as const satisfies Record<string, EntryPoint>;

export type EntryPointName = keyof typeof ENTRY_POINTS;

export const ENTRY_POINT_NAMES = Object.keys(ENTRY_POINTS) as EntryPointName[];

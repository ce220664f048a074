/** The explorer's own options: its scenario, fault depth, parallel cells, a cell or schedule to replay. */
import type { OptionDeclaration } from './types.js';

export const EXPLORE_OPTIONS = {
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
} as const satisfies Record<string, OptionDeclaration>;

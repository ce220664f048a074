/** The "Output and help" options: --json, --open and every command's --help. */
import type { OptionDeclaration } from './types.js';

export const OUTPUT_AND_HELP_OPTIONS = {
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
      'docs:figures': {},
      'bench:scale': {},
    },
  },
} as const satisfies Record<string, OptionDeclaration>;

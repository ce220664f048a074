/** The docs commands' own options: docs:options' and docs:figures' --check, and how docs:figures records a summary. */
import type { OptionDeclaration } from './types.js';

export const DOCS_OPTIONS = {
  check: {
    kind: 'flag',
    group: 'run',
    help: 'write nothing; exit 1 if the docs differ from what would be written',
    entryPoints: { 'docs:options': {}, 'docs:figures': {} },
  },
  record: {
    kind: 'text',
    pattern: /^[a-z][a-z-]*$/,
    shape:
      "a figure's name (sample-run, default-run, bench, explore-cells, explore-interleavings, testing-times)",
    placeholder: 'FIGURE',
    group: 'run',
    help: "write docs/figures/FIGURE.json from the report of the figure's command (--from), measured at this checkout, then render",
    entryPoints: { 'docs:figures': { defaultText: 'none: render only' } },
  },
  from: {
    kind: 'text',
    pattern: /\S/,
    shape: 'a file',
    placeholder: 'REPORT',
    group: 'run',
    help: "the report to record (--record): the JSON the figure's command wrote under reports/",
    entryPoints: { 'docs:figures': { defaultText: 'none' } },
  },
} as const satisfies Record<string, OptionDeclaration>;

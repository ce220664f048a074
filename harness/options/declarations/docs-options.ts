/** docs:options' own option: check docs/options.md instead of writing it (--check). */
import type { OptionDeclaration } from './types.js';

export const DOCS_OPTIONS = {
  check: {
    kind: 'flag',
    group: 'run',
    help: 'write nothing; exit 1 if docs/options.md differs from the declaration',
    entryPoints: { 'docs:options': {} },
  },
} as const satisfies Record<string, OptionDeclaration>;

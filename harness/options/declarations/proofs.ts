/** The proofs' own option: the delivery to kill (--crash-at). */
import { crashTarget } from '../../../modes/kit/crash.js';
import type { OptionDeclaration } from './types.js';

export const PROOFS_OPTIONS = {
  'crash-at': {
    kind: 'text',
    pattern: /^[A-Za-z0-9._:-]{1,128}@[1-9][0-9]*$/,
    shape: 'EVENT@RECEIVE, like evt-000000@1',
    placeholder: 'E@N',
    group: 'run',
    help:
      'the delivery to kill (the first delivery of the only event by default); a delivery that never ' +
      'happens makes every verdict NOT PROVED',
    entryPoints: { proofs: { default: crashTarget('evt-000000', 1) } },
  },
} as const satisfies Record<string, OptionDeclaration>;

/** Redrive's own option: the run to redrive (--run). */
import type { OptionDeclaration } from './types.js';

export const REDRIVE_OPTIONS = {
  run: {
    kind: 'text',
    pattern: /^[A-Za-z0-9._:-]{1,128}$/,
    shape: 'a run id (1–128 of A-Z a-z 0-9 . _ : -), like 20261130T150406Z-r1-ea4x',
    placeholder: 'RUN',
    group: 'run',
    help: 'the run to redrive, as `npm run experiment` named it (reports/<runId>.json)',
    entryPoints: { redrive: { required: true } },
  },
} as const satisfies Record<string, OptionDeclaration>;

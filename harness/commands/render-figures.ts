/**
 * `npm run docs:figures`: renders the docs' tables of measured figures from docs/figures/; with
 * --record FIGURE --from REPORT, first writes that figure's summary from a report; with --check,
 * writes nothing and fails when a page differs (test/unit/docs-figures.test.ts checks the same).
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { runEntryPoint } from '../options/run.js';
import { UsageError } from '../options/usage-error.js';
import { recordSummary, renderedPages, summaryPath, unmeasured } from '../studies/figures/docs.js';
import { FIGURE_NAMES, type FigureName } from '../studies/figures/figures.js';

const isFigure = (name: string): name is FigureName => (FIGURE_NAMES as readonly string[]).includes(name);

runEntryPoint('docs:figures', ({ values }) => {
  if ((values.record === undefined) !== (values.from === undefined))
    throw new UsageError('--record FIGURE and --from REPORT go together');
  if (values.record !== undefined && values.from !== undefined) {
    if (!isFigure(values.record))
      throw new UsageError(`--record: no figure '${values.record}'; the figures: ${FIGURE_NAMES.join(', ')}`);
    if (values.check) throw new UsageError('--check writes nothing: it cannot --record');
    const summary = recordSummary(values.record, resolve(values.from));
    process.stdout.write(
      `wrote ${summaryPath(values.record)} (${summary.provenance.commit}, ${summary.provenance.on})\n`,
    );
  }
  const pages = renderedPages();
  const differing = pages.filter(({ current, rendered }) => current !== rendered);
  if (values.check) {
    for (const { page } of differing)
      process.stderr.write(`${page} differs from its figures: run \`npm run docs:figures\`\n`);
    const missing = unmeasured();
    if (missing.length > 0) process.stderr.write(`not measured yet: ${missing.join(', ')}\n`);
    return differing.length === 0 && missing.length === 0 ? 0 : 1;
  }
  for (const { page, rendered } of differing) writeFileSync(join(PROJECT_ROOT, page), rendered);
  process.stdout.write(
    differing.length === 0
      ? `every figure up to date (${pages.length} pages)\n`
      : `rendered ${differing.map(({ page }) => page).join(', ')}\n`,
  );
  return 0;
});

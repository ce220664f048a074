/** The docs' figure blocks rendered from the summaries under docs/figures/, and a summary recorded from a report. */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../../stack/bundling.js';
import { blocksIn, renderBlocks } from '../../report/figures/markdown.js';
import { caption, provenanceNow } from '../../report/figures/provenance.js';
import { type AnyFigure, FIGURE_NAMES, FIGURES, type FigureName, type FigureSummary } from './figures.js';

export const summaryPath = (name: FigureName): string => `docs/figures/${name}.json`;

/** The pages that may hold figure blocks: the README and every page under docs/. */
export function figurePages(): string[] {
  const docs = readdirSync(join(PROJECT_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

function ownerOf(block: string): [FigureName, AnyFigure] {
  for (const name of FIGURE_NAMES) {
    const figure: AnyFigure = FIGURES[name];
    if (block in figure.blocks) return [name, figure];
  }
  throw new Error(`no figure renders the block '${block}' (harness/studies/figures/figures.ts)`);
}

function loadSummary(name: FigureName): FigureSummary | undefined {
  const path = join(PROJECT_ROOT, summaryPath(name));
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as FigureSummary) : undefined;
}

/** A block's text: the caption (its run, and whether it is stale), a blank line, the table. */
export function renderBlock(block: string): string {
  const [name, figure] = ownerOf(block);
  const summary = loadSummary(name);
  const render = figure.blocks[block];
  if (summary === undefined || render === undefined)
    return `*Not measured yet: run \`${figure.command}\`, then \`npm run docs:figures -- --record ${name} --from <its report>\`.*`;
  return `${caption(summary.provenance)}\n\n${render(summary.data)}`;
}

/** Each page with blocks, as it is and as its summaries render it. */
export function renderedPages(): {
  readonly page: string;
  readonly current: string;
  readonly rendered: string;
}[] {
  return figurePages().flatMap((page) => {
    const current = readFileSync(join(PROJECT_ROOT, page), 'utf8');
    if (blocksIn(current).length === 0) return [];
    return [{ page, current, rendered: renderBlocks(current, renderBlock) }];
  });
}

/** Writes docs/figures/<name>.json from the report the figure's command wrote, measured at this checkout now. */
export function recordSummary(name: FigureName, reportPath: string, now = new Date()): FigureSummary {
  const figure: AnyFigure = FIGURES[name];
  const report: unknown = JSON.parse(readFileSync(reportPath, 'utf8'));
  const summary: FigureSummary = {
    provenance: provenanceNow(figure.command, figure.code, now),
    data: figure.summarize(report),
  };
  const path = join(PROJECT_ROOT, summaryPath(name));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

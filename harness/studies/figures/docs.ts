/** The docs' figure blocks rendered from the summaries under docs/figures/, and a summary recorded from a report. */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../../stack/bundling.js';
import { type AnyFigure, FIGURE_NAMES, FIGURES, type FigureName, type FigureSummary } from './figures.js';
import { blocksIn, renderBlocks } from './markdown.js';
import { caption, provenanceNow } from './provenance.js';

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

/**
 * A renderer of blocks: each block's text is the figure's caption (its run, and whether it is
 * stale), a blank line, its table. A figure's summary is read and its code fingerprinted once per
 * renderer, however many blocks (and pages) it has: bench has four.
 */
export function blockRenderer(): (block: string) => string {
  const headers = new Map<FigureName, { readonly summary?: FigureSummary; readonly caption: string }>();
  const headerOf = (name: FigureName, figure: AnyFigure) => {
    let header = headers.get(name);
    if (header === undefined) {
      const summary = loadSummary(name);
      header = summary
        ? { summary, caption: caption(summary.provenance) }
        : {
            caption: `*Not measured yet: run \`${figure.command}\`, then \`npm run docs:figures -- --record ${name} --from <its report>\`.*`,
          };
      headers.set(name, header);
    }
    return header;
  };
  return (block) => {
    const [name, figure] = ownerOf(block);
    const { summary, caption: text } = headerOf(name, figure);
    const render = figure.blocks[block];
    return summary === undefined || render === undefined ? text : `${text}\n\n${render(summary.data)}`;
  };
}

/** The figures with no summary under docs/figures/ yet: their blocks say "Not measured yet". */
export const unmeasured = (): FigureName[] => FIGURE_NAMES.filter((name) => loadSummary(name) === undefined);

/** Each page with blocks, as it is (its line endings made LF) and as its summaries render it. */
export function renderedPages(): {
  readonly page: string;
  readonly current: string;
  readonly rendered: string;
}[] {
  const render = blockRenderer();
  return figurePages().flatMap((page) => {
    const current = readFileSync(join(PROJECT_ROOT, page), 'utf8').replaceAll('\r\n', '\n');
    if (blocksIn(current).length === 0) return [];
    return [{ page, current, rendered: renderBlocks(current, render) }];
  });
}

/**
 * Writes docs/figures/<name>.json from the report the figure's command wrote at this checkout: a
 * report of another command's settings, or older than the code it measures, is refused.
 */
export function recordSummary(name: FigureName, reportPath: string): FigureSummary {
  const figure: AnyFigure = FIGURES[name];
  const report: unknown = JSON.parse(readFileSync(reportPath, 'utf8'));
  const refusal = figure.refuse(report);
  if (refusal !== undefined)
    throw new Error(`${reportPath} is not what \`${figure.command}\` writes: ${refusal}`);
  const summary: FigureSummary = {
    provenance: provenanceNow(figure.command, figure.code, statSync(reportPath).mtime),
    data: figure.summarize(report),
  };
  const path = join(PROJECT_ROOT, summaryPath(name));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blockRenderer, renderedPages, summaryPath } from '../../harness/studies/figures/docs.js';
import { FIGURE_NAMES, FIGURES } from '../../harness/studies/figures/figures.js';
import { blocksIn, renderBlocks } from '../../harness/studies/figures/markdown.js';
import { caption, fingerprint, type Provenance } from '../../harness/studies/figures/provenance.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';

describe("the docs' measured figures cannot drift from their summaries", () => {
  const pages = renderedPages();

  it('renders every figure block of the README and docs/ exactly as it stands (a table edited by hand fails)', () => {
    for (const { page, current, rendered } of pages)
      expect(current, `${page}: run npm run docs:figures`).toBe(rendered);
  });

  it('holds each block of every figure once in the docs, and no block of no figure', () => {
    const inDocs = pages.flatMap(({ current }) => blocksIn(current)).sort();
    const declared = FIGURE_NAMES.flatMap((name) => Object.keys(FIGURES[name].blocks)).sort();
    expect(inDocs).toEqual(declared);
  });

  it('has a committed summary for every figure, and none for a figure that is gone', () => {
    for (const name of FIGURE_NAMES)
      expect(existsSync(`${PROJECT_ROOT}${summaryPath(name)}`), name).toBe(true);
    const summaries = readdirSync(`${PROJECT_ROOT}docs/figures`).map((file) => file.replace(/\.json$/, ''));
    expect(summaries.sort()).toEqual([...FIGURE_NAMES].sort());
  });

  it('fails a hand edit: a changed figure in a block is rendered back', () => {
    const page = pages.find(({ current }) => current.includes('<!-- figure: sample-run -->'));
    expect(page).toBeDefined();
    const edited = (page?.current ?? '').replace(
      /(<!-- figure: sample-run -->[\s\S]*?effectively-once\s+)(\d)/,
      '$19',
    );
    expect(edited).not.toBe(page?.current);
    expect(renderBlocks(edited, blockRenderer())).toBe(page?.current);
  });
});

describe('the staleness rule', () => {
  const provenance = (code: Record<string, string>): Provenance => ({
    on: '2026-12-05',
    commit: 'abc1234',
    machine: '2 cores',
    command: 'npm run experiment -- --seed d3',
    code,
  });

  it('captions a figure fresh while the code it measured is what it was', () => {
    const text = caption(
      provenance({ 'modes/': fingerprint('modes/'), 'contract/': fingerprint('contract/') }),
    );
    expect(text).toBe('*Measured 2026-12-05 at abc1234 on 2 cores: `npm run experiment -- --seed d3`.*');
  });

  it('marks it stale, naming the folders whose source changed since', () => {
    const text = caption(
      provenance({ 'modes/': 'a different print', 'contract/': fingerprint('contract/') }),
    );
    expect(text).toContain('**Stale: `modes/` changed since; re-measure.**');
  });

  it('fingerprints source, not tests: a folder hashes the same whatever its test files', () => {
    expect(fingerprint('packages/consumer-cores/src/')).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint('modes/')).not.toBe(fingerprint('verifier/'));
  });
});

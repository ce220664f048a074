import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTRY_POINT_NAMES } from '../../../../harness/options/entry-points.js';
import { helpText, optionLabel } from '../../../../harness/options/help.js';
import { OPTIONS_DOC_PATH, optionsMarkdown } from '../../../../harness/options/markdown.js';
import { acceptedOptions } from '../../../../harness/options/parse.js';
import { PROJECT_ROOT } from '../../../../stack/bundling.js';

describe('the options, documented from the declaration', () => {
  it(`${OPTIONS_DOC_PATH} is what the declaration makes (npm run docs:options rewrites it)`, () => {
    const written = readFileSync(join(PROJECT_ROOT, OPTIONS_DOC_PATH), 'utf8');
    expect(written, `${OPTIONS_DOC_PATH} is out of date: run npm run docs:options`).toBe(optionsMarkdown());
  });

  it.each(ENTRY_POINT_NAMES)(
    '%s: --help and the docs list every option it accepts, and no other',
    (entryPoint) => {
      const help = helpText(entryPoint);
      const accepted = acceptedOptions(entryPoint);
      for (const name of accepted) expect(help).toContain(`  ${optionLabel(name)}`);
      const listed = [...help.matchAll(/^ {2}(?:-\w, )?--([a-z-]+)/gm)].map((match) => match[1]);
      expect(listed.sort()).toEqual([...accepted].sort());
    },
  );

  it('wraps --help to 100 columns', () => {
    for (const entryPoint of ENTRY_POINT_NAMES) {
      for (const line of helpText(entryPoint).split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
    }
  });

  it('gives the experiment’s table a targets column, with where each option is refused', () => {
    const markdown = optionsMarkdown();
    expect(markdown).toContain('| option | meaning | allowed | default | targets |');
    expect(markdown).toMatch(/\| `--kill-rate R` \|.*\| embedded \|\n/);
    expect(markdown).toMatch(/\| `--endpoint URL` \|.*\| localstack \|\n/);
    expect(markdown).toMatch(/\| `--poison-rate R` \|.*\| all \|\n/);
  });
});

/**
 * `npm run docs:options`: writes docs/options.md from the declaration; with --check, writes nothing
 * and fails when the file differs (test/unit/harness/options/ checks the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { OPTIONS_DOC_PATH, optionsMarkdown } from '../options/markdown.js';
import { runEntryPoint } from '../options/run.js';

runEntryPoint('docs:options', ({ values }) => {
  const path = join(PROJECT_ROOT, OPTIONS_DOC_PATH);
  const expected = optionsMarkdown();
  if (values.check) {
    const current = (() => {
      try {
        return readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
    })();
    if (current === expected) return 0;
    process.stderr.write(`${OPTIONS_DOC_PATH} is out of date: run \`npm run docs:options\`\n`);
    return 1;
  }
  writeFileSync(path, expected);
  process.stdout.write(`wrote ${OPTIONS_DOC_PATH}\n`);
  return 0;
});

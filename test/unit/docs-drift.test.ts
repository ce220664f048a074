import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deploymentSettingsFromContext } from '../../contract/deployment-settings.js';
import { DEFAULT_MODES, MODE_NAMES } from '../../contract/topology.js';
import { IGNORED_TYPES, RESOURCE_TYPES } from '../../harness/environments/assembly/resource-types.js';
import { OPTIONS } from '../../harness/options/declaration.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';

const read = (path: string) => readFileSync(`${PROJECT_ROOT}${path}`, 'utf8');
const deploying = read('docs/deploying.md');

/** The table that starts with `header`, up to the first blank line. */
function tableAfter(text: string, header: string): string {
  const start = text.indexOf(header);
  if (start === -1) throw new Error(`no table with the header ${header}`);
  const table = text.slice(start);
  return table.slice(0, table.indexOf('\n\n'));
}

/** The names in backticks in each row's first column. */
function firstColumnNames(table: string): string[] {
  return table
    .split('\n')
    .slice(2)
    .flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? ''));
}

/** The `-c` keys stack/app.ts reads: the settings' own (recorded as they are asked for) and the stack's name. */
function contextKeys(): string[] {
  const asked = new Set<string>(['stackName']);
  deploymentSettingsFromContext((key) => {
    asked.add(key);
    return undefined;
  });
  return [...asked].sort();
}

describe('docs/deploying.md cannot drift from the code', () => {
  it('lists every template property the local runtime accepts and does not emulate', () => {
    const table = tableAfter(deploying, '| resource type | properties | why |');
    for (const [type, spec] of Object.entries(RESOURCE_TYPES)) {
      for (const property of Object.keys(spec.notEmulated)) {
        expect(table, `${type} ${property}`).toMatch(
          new RegExp(`\\| \`${type}\` \\|[^\\n]*\`${property.replace('.', '\\.')}\``),
        );
      }
    }
    for (const type of Object.keys(IGNORED_TYPES))
      expect(table).toContain(`| \`${type}\` | the whole resource |`);
  });

  it('prints the operator policy the local deployment enforces (contract/operator-policy.json)', () => {
    const block = /### The permissions a person needs for a run[\s\S]*?```json\n([\s\S]*?)\n```/.exec(
      deploying,
    )?.[1];
    expect(block, 'the policy block').toBeDefined();
    expect(JSON.parse(block ?? '')).toEqual(JSON.parse(read('contract/operator-policy.json')));
  });

  it('documents every context key the app reads, and no other', () => {
    const table = deploying.slice(deploying.indexOf('| context | meaning | default |'));
    const rows = table.slice(0, table.indexOf('\n\n'));
    const documented = [...rows.matchAll(/^\| `([A-Za-z]+)` \|/gm)].map((match) => match[1] ?? '').sort();
    expect(documented).toEqual(contextKeys());
  });

  it('uses no `-c key=` anywhere in the docs that the app does not read', () => {
    const docs = [
      'README.md',
      'localstack/README.md',
      ...readdirSync(`${PROJECT_ROOT}docs`)
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const used = new Set(
      docs.flatMap((path) => [...read(path).matchAll(/-c ([A-Za-z]+)=/g)].map((match) => match[1] ?? '')),
    );
    expect(used.size).toBeGreaterThan(3);
    expect([...used].filter((key) => !contextKeys().includes(key))).toEqual([]);
  });

  it('lists exactly the experiment options the declarations accept on --target embedded only', () => {
    const line = deploying.slice(deploying.indexOf('Embedded only: '));
    const paragraph = line.slice(0, line.indexOf('\n\n'));
    const documented = [...paragraph.matchAll(/`(--[a-z-]+)`/g)].map((match) => match[1] ?? '').sort();
    const embeddedOnly = Object.entries(OPTIONS)
      .filter(([, option]) => {
        const targets = (option as { targets?: { only: readonly string[] } }).targets;
        return targets?.only.every((target) => target === 'embedded') ?? false;
      })
      .map(([name]) => `--${name}`)
      .sort();
    expect(documented).toEqual(embeddedOnly);
  });
});

describe('the mode tables and the outcome fields cannot drift from the code', () => {
  const MODE_TABLE = '| mode | the consumer | a crash between the two steps gives |';

  it('docs/design.md has a row for every mode of the topology, and no other', () => {
    expect(firstColumnNames(tableAfter(read('docs/design.md'), MODE_TABLE)).sort()).toEqual(
      [...MODE_NAMES].sort(),
    );
  });

  it("README's modes and docs/modes.md's are every mode of the topology, each once", () => {
    const names = [
      ...firstColumnNames(tableAfter(read('README.md'), MODE_TABLE)),
      ...firstColumnNames(tableAfter(read('docs/modes.md'), MODE_TABLE)),
    ];
    expect(names.sort()).toEqual([...MODE_NAMES].sort());
  });

  it('counts the modes as the topology does, wherever the docs say how many there are', () => {
    const WORDS = [
      'zero',
      'one',
      'two',
      'three',
      'four',
      'five',
      'six',
      'seven',
      'eight',
      'nine',
      'ten',
      'eleven',
      'twelve',
    ];
    const word = (count: number) => WORDS[count] ?? String(count);
    const docs = ['README.md', ...readdirSync(`${PROJECT_ROOT}docs`).map((name) => `docs/${name}`)].filter(
      (path) => path.endsWith('.md'),
    );
    const counts = docs.flatMap((path) =>
      [...read(path).matchAll(/\((\w+) in the default run, (\w+) in all\)/g)].map(
        (match) => `${path}: ${match[1]}, ${match[2]}`,
      ),
    );
    expect(counts.length).toBeGreaterThan(0);
    for (const count of counts)
      expect(count).toMatch(`: ${word(DEFAULT_MODES.length)}, ${word(MODE_NAMES.length)}`);
    const resources = tableAfter(deploying, '| | default (no context) | `-c modes=all` |');
    expect(resources).toContain(`: ${DEFAULT_MODES.length} consumers`);
    expect(resources).toContain(`: ${MODE_NAMES.length} consumers`);
  });

  it("defines every field of the verifier's outcome in design.md's outcome table", () => {
    const source = read('verifier/outcome.ts');
    const body = source.slice(source.indexOf('export interface ModeOutcome {'));
    const fields = [...body.slice(0, body.indexOf('\n}\n')).matchAll(/^ {2}readonly (\w+)\??:/gm)].map(
      (match) => match[1] ?? '',
    );
    expect(fields.length).toBeGreaterThan(20);
    const defined = new Set(firstColumnNames(tableAfter(read('docs/design.md'), '| field | meaning |')));
    expect(fields.filter((field) => !defined.has(field))).toEqual([]);
  });
});

describe("docs/design.md's repository layout cannot drift from the tree", () => {
  /** The folder names the layout block lists, each with its parent where it is indented under one. */
  function listedFolders(): string[] {
    const block = /## Repository layout[\s\S]*?```\n([\s\S]*?)\n```/.exec(read('docs/design.md'))?.[1] ?? '';
    const folders: string[] = [];
    let parent = '';
    for (const line of block.split('\n')) {
      const match = /^( *)([a-z0-9-]+\/)/.exec(line);
      if (match === null || (match[1] ?? '').length % 2 !== 0 || (match[1] ?? '').length > 2) continue;
      if ((match[1] ?? '') === '') parent = match[2] ?? '';
      folders.push(match[1] === '' ? parent : `${parent}${match[2]}`);
    }
    return folders;
  }

  /** The folders of the tree the layout must name: every top folder with a tracked file, and those of modes/, services/ and harness/. */
  function treeFolders(): string[] {
    const files = execFileSync('git', ['ls-files'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).split('\n');
    const folders = new Set<string>();
    for (const file of files) {
      const parts = file.split('/');
      if (parts.length < 2 || (parts[0] ?? '').startsWith('.')) continue;
      folders.add(`${parts[0]}/`);
      if (['modes', 'services', 'harness'].includes(parts[0] ?? '') && parts.length > 2) {
        folders.add(`${parts[0]}/${parts[1]}/`);
      }
    }
    return [...folders].sort();
  }

  it('names every folder of the tree it covers, and none that is gone', () => {
    expect(listedFolders().sort()).toEqual(treeFolders());
  });
});

describe('the docs link only to what exists', () => {
  it('every relative link of the README, docs/ and the packages resolves to a file or folder', () => {
    const pages = [
      'README.md',
      ...readdirSync(`${PROJECT_ROOT}docs`)
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
      ...readdirSync(`${PROJECT_ROOT}packages`).map((name) => `packages/${name}/README.md`),
    ];
    const broken = pages.flatMap((page) =>
      [...read(page).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1] ?? '')
        .filter((target) => !/^[a-z]+:/.test(target))
        .filter((target) => !existsSync(join(PROJECT_ROOT, dirname(page), target)))
        .map((target) => `${page}: ${target}`),
    );
    expect(broken).toEqual([]);
  });
});

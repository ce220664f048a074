/** docs/options.md, made from the declaration: a table per entry point. */
import { GROUPS, type GroupName, OPTIONS, type OptionDeclaration, type OptionName } from './declaration.js';
import { ENTRY_POINT_NAMES, ENTRY_POINTS, type EntryPoint, type EntryPointName } from './entry-points.js';
import { capitalised, groupNote, helpLine, optionLabel } from './help.js';
import { acceptedOptions } from './parse.js';
import { allowed, defaultText, useAt } from './values.js';

export const OPTIONS_DOC_PATH = 'docs/options.md';

/** A table cell: one line, pipes escaped, and `<` outside code spans escaped (`sweep-<r>` is no tag). */
const cell = (text: string) =>
  text
    .replace(/\s+/g, ' ')
    .trim()
    .split('`')
    .map((part, index) => (index % 2 === 1 ? part : part.replaceAll('<', '&lt;')))
    .join('`')
    .replaceAll('|', '\\|');
const row = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
const commandName = (entryPoint: EntryPointName) => ENTRY_POINTS[entryPoint].command.replace(/ --$/, '');

function section(entryPoint: EntryPointName): string[] {
  const command: EntryPoint = ENTRY_POINTS[entryPoint];
  const withTargets = useAt('target', entryPoint) !== undefined;
  const accepted: OptionName[] = acceptedOptions(entryPoint);
  const lines = [
    `## \`${commandName(entryPoint)}\``,
    '',
    `${capitalised(command.summary)}${command.internal ? ` (${command.internal})` : ''}.`,
    '',
    row(['option', 'meaning', 'allowed', 'default', ...(withTargets ? ['targets'] : [])]),
    row(['---', '---', '---', '---', ...(withTargets ? ['---'] : [])]),
  ];
  for (const name of accepted) {
    const declaration: OptionDeclaration = OPTIONS[name];
    lines.push(
      row([
        `\`${optionLabel(name)}\``,
        helpLine(name, entryPoint),
        allowed(declaration) || '—',
        name === 'help' ? '—' : defaultText(name, entryPoint),
        ...(withTargets ? [declaration.targets ? declaration.targets.only.join(', ') : 'all'] : []),
      ]),
    );
  }
  const groups = new Set(accepted.map((name) => OPTIONS[name].group));
  const notes = (Object.keys(GROUPS) as GroupName[]).flatMap((group) => {
    const note = groups.has(group) ? groupNote(group, entryPoint) : undefined;
    return note ? [note] : [];
  });
  if (command.passThrough) notes.push(command.passThrough.help);
  lines.push('', ...notes.flatMap((note) => [note, '']), `Exit codes: ${command.exitCodes}`);
  return lines;
}

export function optionsMarkdown(): string {
  return `${[
    '# Options',
    '',
    '<!-- Generated from harness/options/declaration.ts by `npm run docs:options`: edit the declaration, not this file. -->',
    '',
    'Every command below prints the same with `--help`. An invalid option exits 2 with a message that names',
    "the option, the value and what is allowed; a failed run exits 1. In the experiment's table, *targets*",
    'are the `--target`s that accept the option: the others refuse it and say why.',
    ...ENTRY_POINT_NAMES.flatMap((entryPoint) => ['', ...section(entryPoint)]),
  ].join('\n')}\n`;
}

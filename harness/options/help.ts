/** Each entry point's `--help`, made from the declaration. */
import {
  GROUPS,
  type GroupDeclaration,
  type GroupName,
  OPTIONS,
  type OptionDeclaration,
  type OptionName,
} from './declaration.js';
import { ENTRY_POINTS, type EntryPoint, type EntryPointName } from './entry-points.js';
import { acceptedOptions } from './parse.js';
import { allowed, defaultText, useAt } from './values.js';

const WIDTH = 100;
const COLUMN = 27;

/** Words wrapped to the width, every line after `indent` spaces (the first after `first`). */
function wrap(text: string, indent: number, first = ' '.repeat(indent)): string[] {
  const lines: string[] = [];
  let line = first;
  let words = 0;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (words > 0 && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = ' '.repeat(indent);
      words = 0;
    }
    line += words > 0 ? ` ${word}` : word;
    words += 1;
  }
  lines.push(line);
  return lines;
}

export const capitalised = (text: string) => `${text.slice(0, 1).toUpperCase()}${text.slice(1)}`;

/** `--crash-rate R`, `-h, --help`. */
export function optionLabel(name: OptionName): string {
  const declaration: OptionDeclaration = OPTIONS[name];
  const long = `--${name}${declaration.placeholder ? ` ${declaration.placeholder}` : ''}`;
  return declaration.short ? `-${declaration.short}, ${long}` : long;
}

/** The option's help line at an entry point. */
export function helpLine(name: OptionName, entryPoint: EntryPointName): string {
  return useAt(name, entryPoint)?.help ?? OPTIONS[name].help;
}

/** What it allows, its default, and the targets that take it: `a number from 0 to 1; default 0.02`. */
export function details(name: OptionName, entryPoint: EntryPointName): string {
  if (name === 'help') return '';
  const declaration: OptionDeclaration = OPTIONS[name];
  const scope = useAt('target', entryPoint) !== undefined ? declaration.targets : undefined;
  return [
    allowed(declaration),
    useAt(name, entryPoint)?.required ? 'required' : `default ${defaultText(name, entryPoint)}`,
    scope ? `--target ${scope.only.join(' or ')} only` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** The note of an option group at an entry point, if it has one that applies there. */
export function groupNote(group: GroupName, entryPoint: EntryPointName): string | undefined {
  const { note, noteWith }: GroupDeclaration = GROUPS[group];
  return noteWith === undefined || useAt(noteWith as OptionName, entryPoint) ? note : undefined;
}

export function helpText(entryPoint: EntryPointName): string {
  const command: EntryPoint = ENTRY_POINTS[entryPoint];
  const lines = [
    `Usage: ${command.command} [options]${command.passThrough ? ` ${command.passThrough.usage}` : ''}`,
  ];
  const paragraph = (text: string | undefined) => {
    if (text) lines.push('', text);
  };
  if (command.internal) lines.push('', ...wrap(`${capitalised(command.summary)}; ${command.internal}.`, 0));
  else paragraph(command.description);

  const accepted: OptionName[] = acceptedOptions(entryPoint);
  for (const group of Object.keys(GROUPS) as GroupName[]) {
    const names = accepted.filter((name) => OPTIONS[name].group === group);
    if (names.length === 0) continue;
    lines.push('', `${GROUPS[group].heading}:`);
    for (const name of names) {
      const label = `  ${optionLabel(name)}`;
      const first = label.length < COLUMN - 1 ? label.padEnd(COLUMN) : undefined;
      if (first === undefined) lines.push(label);
      lines.push(...wrap(helpLine(name, entryPoint), COLUMN, first));
      const more = details(name, entryPoint);
      if (more) lines.push(...wrap(more, COLUMN));
    }
    const note = groupNote(group, entryPoint);
    if (note) lines.push(...wrap(note, 2));
  }
  if (command.passThrough) lines.push('', ...wrap(command.passThrough.help, 0));
  paragraph(command.footer);
  lines.push(...(command.footer ? [] : ['']), ...wrap(`Exit codes: ${command.exitCodes}`, 0));
  return lines.join('\n');
}

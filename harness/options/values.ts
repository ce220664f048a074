/**
 * One option's value: reading it from its text, and saying in words what it allows and what it
 * defaults to. The parser's errors, --help and docs/options.md use the same words.
 */
import { isMode, MODE_NAMES, type Mode } from '../../contract/topology.js';
import { OPTIONS, type OptionDeclaration, type OptionName, type Use } from './declaration.js';
import type { EntryPointName } from './entry-points.js';
import { UsageError } from './usage-error.js';

export type OptionValue = boolean | number | string | readonly number[] | readonly Mode[];

const count = (n: number) => n.toLocaleString('en-US');

/** What the option accepts, completing "--<option> must be …" (empty for a flag). */
export function allowed(declaration: OptionDeclaration): string {
  switch (declaration.kind) {
    case 'flag':
      return '';
    case 'integer':
      return `a whole number from ${count(declaration.min)} to ${count(declaration.max)}`;
    case 'rate':
      return 'a number from 0 to 1';
    case 'integers':
      return `a comma-separated list of whole numbers from ${count(declaration.min)} to ${count(declaration.max)}`;
    case 'rates':
      return 'a comma-separated list of numbers from 0 to 1';
    case 'modes':
      return `a comma-separated list of ${MODE_NAMES.join(', ')}`;
    case 'choice':
      return `one of ${declaration.choices.join(', ')}`;
    case 'text':
      return declaration.shape;
  }
}

/** The option's declaration at one entry point, or undefined where it is not accepted. */
export function useAt(name: OptionName, entryPoint: EntryPointName): Use<OptionValue> | undefined {
  const uses: Partial<Record<EntryPointName, Use<OptionValue>>> = OPTIONS[name].entryPoints;
  return uses[entryPoint];
}

function valueText(value: OptionValue): string {
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  // As it is typed on a command line: 100000, not 100,000.
  if (typeof value === 'number' || typeof value === 'string') return String(value);
  if (value.length === 0) return 'none';
  if (value.length === MODE_NAMES.length && MODE_NAMES.every((mode) => value.includes(mode as never)))
    return 'all';
  return value.join(',');
}

/** The default in words: `200; --quick: 60`, `off`, or what the declaration says. */
export function defaultText(name: OptionName, entryPoint: EntryPointName): string {
  const use = useAt(name, entryPoint);
  const declaration: OptionDeclaration = OPTIONS[name];
  if (use?.required) return 'required';
  const plain =
    use?.defaultText ??
    (use?.default !== undefined ? valueText(use.default) : declaration.kind === 'flag' ? 'off' : 'none');
  return use?.quick !== undefined ? `${plain}; --quick: ${valueText(use.quick)}` : plain;
}

const WHOLE = /^\d+$/;

/** Reads one option's text, or says what is wrong with it naming the option, the value and what is allowed. */
export function readValue(name: string, declaration: OptionDeclaration, raw: string): OptionValue {
  const refuse = (detail = ''): never => {
    throw new UsageError(`--${name} must be ${allowed(declaration)}, got "${raw}"${detail}`);
  };
  const integer = (text: string, min: number, max: number): number => {
    const value = Number(text.trim());
    return WHOLE.test(text.trim()) && Number.isSafeInteger(value) && value >= min && value <= max
      ? value
      : refuse();
  };
  const rate = (text: string): number => {
    const value = Number(text);
    return text.trim() !== '' && value >= 0 && value <= 1 ? value : refuse();
  };
  const items = (): string[] => {
    const list = raw.split(',').map((item) => item.trim());
    return list.length > 0 && list.every((item) => item !== '') ? list : refuse();
  };
  switch (declaration.kind) {
    case 'flag':
      throw new UsageError(`--${name} takes no value, got "${raw}"`);
    case 'integer':
      return integer(raw, declaration.min, declaration.max);
    case 'rate':
      return rate(raw);
    case 'integers':
      return items().map((item) => integer(item, declaration.min, declaration.max));
    case 'rates':
      return items().map(rate);
    case 'modes': {
      const names = raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      const unknown = names.filter((item) => !isMode(item));
      if (names.length === 0) refuse();
      if (unknown.length > 0) refuse(` (unknown: "${unknown.join(', ')}")`);
      // Always in topology order, so reports of the same modes line up.
      return MODE_NAMES.filter((mode) => names.includes(mode));
    }
    case 'choice':
      return declaration.choices.includes(raw) ? raw : refuse();
    case 'text':
      return declaration.pattern.test(raw) ? raw : refuse();
  }
}

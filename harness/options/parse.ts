/**
 * The one parser: an entry point's command line read against the declaration, every value checked
 * (range, choices, the targets that accept it, what it needs), defaults applied.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import {
  type AcceptedBy,
  OPTIONS,
  type OptionDeclaration,
  type OptionName,
  type OptionValues,
  TARGETS,
  type Target,
} from './declaration.js';
import { ENTRY_POINT_NAMES, ENTRY_POINTS, type EntryPoint, type EntryPointName } from './entry-points.js';
import { UsageError } from './usage-error.js';
import { type OptionValue, readValue, useAt } from './values.js';

export interface ParsedOptions<E extends EntryPointName> {
  readonly values: OptionValues<E>;
  /** The options given on the command line (a default never contradicts a deployment). */
  readonly explicit: ReadonlySet<OptionName>;
  /** What followed a lone `--`, at an entry point that passes it on. */
  readonly passThrough: readonly string[];
}

const OPTION_NAMES = Object.keys(OPTIONS) as OptionName[];

/** The options an entry point accepts, in the declaration's order. */
export function acceptedOptions<E extends EntryPointName>(entryPoint: E): AcceptedBy<E>[] {
  return OPTION_NAMES.filter((name) => useAt(name, entryPoint) !== undefined) as AcceptedBy<E>[];
}

const declarationOf = (name: OptionName): OptionDeclaration => OPTIONS[name];

/** Whether the command line asks for help (before a lone `--`): it wins over anything else on it. */
export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

export function parseOptions<E extends EntryPointName>(
  entryPoint: E,
  argv: readonly string[],
): ParsedOptions<E> {
  const command: EntryPoint = ENTRY_POINTS[entryPoint];
  const accepted: OptionName[] = acceptedOptions(entryPoint);
  const options: ParseArgsConfig['options'] = Object.fromEntries(
    accepted.map((name) => {
      const declaration = declarationOf(name);
      return [
        name,
        {
          type: declaration.kind === 'flag' ? 'boolean' : 'string',
          ...(declaration.short ? { short: declaration.short } : {}),
        },
      ];
    }),
  );
  const parsed = (() => {
    try {
      return parseArgs({
        args: negativeValuesJoined(argv, options),
        options,
        strict: true,
        allowPositionals: true,
        tokens: true,
      });
    } catch (error) {
      throw new UsageError(explainParseError(error, entryPoint, accepted));
    }
  })();

  const terminator = parsed.tokens.find((token) => token.kind === 'option-terminator');
  const stray = parsed.tokens.find(
    (token) => token.kind === 'positional' && (terminator === undefined || token.index < terminator.index),
  );
  if (stray?.kind === 'positional') {
    const hint = command.passThrough ? ' (what is passed on goes after a lone --)' : '';
    throw new UsageError(`unexpected argument "${stray.value}"${hint}`);
  }
  if (terminator && !command.passThrough) {
    throw new UsageError(`${command.command} takes no arguments after a lone --`);
  }

  const given = parsed.values as Record<string, string | boolean | undefined>;
  const explicit = new Set(accepted.filter((name) => given[name] !== undefined));
  const quick = given.quick === true;
  const values: Record<string, OptionValue | undefined> = {};
  for (const name of accepted) {
    const declaration = declarationOf(name);
    const raw = given[name];
    const use = useAt(name, entryPoint);
    if (declaration.kind === 'flag') values[name] = raw === true;
    else if (typeof raw === 'string') values[name] = readValue(name, declaration, raw);
    else values[name] = quick && use?.quick !== undefined ? use.quick : use?.default;
  }

  for (const name of accepted) {
    if (useAt(name, entryPoint)?.required && !explicit.has(name)) {
      const placeholder = declarationOf(name).placeholder;
      throw new UsageError(
        `${command.command.replace(/ --$/, '')} needs --${name}${placeholder ? ` ${placeholder}` : ''}: ${declarationOf(name).help}`,
      );
    }
  }

  const target = values.target;
  if (typeof target === 'string' && (TARGETS as readonly string[]).includes(target)) {
    for (const name of explicit) {
      const scope = declarationOf(name).targets;
      if (scope && !scope.only.includes(target as Target)) {
        throw new UsageError(`--${name} ${scope.refusal(target as Target)}`);
      }
    }
  }
  for (const name of explicit) {
    const needs = declarationOf(name).requires;
    if (needs && !values[needs.option]) {
      const placeholder = declarationOf(needs.option as OptionName).placeholder;
      const wanted = placeholder ? `--${needs.option} ${placeholder}` : `--${needs.option}`;
      throw new UsageError(`--${name} needs ${wanted} (${needs.why})`);
    }
  }

  return {
    values: values as OptionValues<E>,
    explicit,
    passThrough: terminator ? argv.slice(terminator.index + 1) : [],
  };
}

/** Options that are gone, and what replaced them. */
const REPLACED: Readonly<Record<string, string>> = {
  core: "replaced by the explorer's API, which explores your own consumer, not a copy of the cores inside the lab's modes: write a scenario (docs/explore.md#explore-your-own-consumer) and run it with --scenario FILE or from your tests",
};

/**
 * `--messages -5` as `--messages=-5`: parseArgs calls a value that starts with a dash ambiguous,
 * while the `=` spelling reaches the option's own check. Both spellings then get the same message
 * ("--messages must be a whole number …, got "-5""). Only a negative number is joined: `--seed
 * -x` stays ambiguous.
 */
function negativeValuesJoined(argv: readonly string[], options: ParseArgsConfig['options']): string[] {
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] as string;
    const next = argv[index + 1];
    if (token === '--') return [...joined, ...argv.slice(index)];
    const name = /^--([^=]+)$/.exec(token)?.[1];
    if (name && options?.[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${token}=${next}`);
      index += 1;
    } else joined.push(token);
  }
  return joined;
}

/** The accepted option nearest an unknown one (a typo: at most a quarter of its letters off), if any. */
export function nearestOption(name: string, accepted: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(name.length / 4));
  const ranked = accepted
    .map((candidate) => ({ candidate, distance: editDistance(name, candidate) }))
    .filter(({ distance }) => distance <= limit)
    .sort((a, b) => a.distance - b.distance);
  return ranked[0]?.candidate;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j += 1) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/** parseArgs' errors, said in this project's words where it helps (an option of another command, a typo). */
function explainParseError(error: unknown, entryPoint: EntryPointName, accepted: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'(-[^']*)'/.exec(message)?.[1] ?? '';
    const name = option.replace(/^-+/, '').replace(/=.*$/, '');
    const elsewhere = (OPTION_NAMES as string[]).includes(name)
      ? ENTRY_POINT_NAMES.filter((other) => useAt(name as OptionName, other) !== undefined)
      : [];
    const replaced = REPLACED[name];
    if (replaced !== undefined) return `Unknown option '${option}': ${replaced}`;
    if (elsewhere.length > 0) {
      return `Unknown option '${option}': it is an option of ${elsewhere.map((other) => ENTRY_POINTS[other].command.replace(/ --$/, '')).join(', ')}, not of ${ENTRY_POINTS[entryPoint].command.replace(/ --$/, '')}`;
    }
    const nearest = option.startsWith('--') ? nearestOption(name, accepted) : undefined;
    return nearest ? `Unknown option '${option}': did you mean --${nearest}?` : `Unknown option '${option}'`;
  }
  return message;
}

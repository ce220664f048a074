/**
 * The one wrapper around every `npm run` entry point: `--help` prints the help and exits 0; an
 * invalid option prints the message and a hint and exits 2; a failure prints the error and exits 1;
 * the reports a run wrote are printed last, the same way everywhere.
 */
import { relative } from 'node:path';
import type { EntryPointName } from './entry-points.js';
import { ENTRY_POINTS } from './entry-points.js';
import { helpText } from './help.js';
import { type ParsedOptions, parseOptions, wantsHelp } from './parse.js';
import { UsageError } from './usage-error.js';

/** How a run ended, when it says more than an exit code. */
export interface Finished {
  /** @default 0 */
  readonly exitCode?: number;
  /** The report file the run wrote (JSON), printed as `report: <path>`. */
  readonly report?: string;
  /** The page beside it, printed as `page:   <path>`. */
  readonly page?: string;
}

export type Outcome = number | Finished | undefined;

export interface EntryPointSettings {
  /** Failures whose message says it all: printed without the error's class name. */
  readonly explained?: readonly (abstract new (
    ...args: never[]
  ) => Error)[];
}

interface Output {
  write(text: string): unknown;
}

/** `report: reports/x.json` and `page:   reports/x.html …`, relative to the working directory. */
export function reportPathLines(paths: { readonly report: string; readonly page?: string }): string[] {
  const shown = (path: string) => relative(process.cwd(), path) || path;
  return [
    `report: ${shown(paths.report)}`,
    ...(paths.page ? [`page:   ${shown(paths.page)} (open it in a browser)`] : []),
  ];
}

const PROGRAMMING_ERRORS = [TypeError, ReferenceError, RangeError, SyntaxError];

/** A failure in one line; a programming error (a bug) with its stack. */
export function describeFailure(error: unknown, settings: EntryPointSettings = {}): string {
  if (!(error instanceof Error)) return `error: ${String(error)}`;
  if (PROGRAMMING_ERRORS.some((kind) => error instanceof kind) && error.stack) return `error: ${error.stack}`;
  const explained = error instanceof UsageError || settings.explained?.some((kind) => error instanceof kind);
  return `error: ${explained || error.name === 'Error' ? '' : `${error.name}: `}${error.message}`;
}

/** Runs `main` with the parsed options and answers the exit code; writes only to `stdout` and `stderr`. */
export async function runToExitCode<E extends EntryPointName>(
  entryPoint: E,
  argv: readonly string[],
  main: (options: ParsedOptions<E>) => Outcome | Promise<Outcome>,
  io: { readonly stdout: Output; readonly stderr: Output },
  settings: EntryPointSettings = {},
): Promise<number> {
  const { command } = ENTRY_POINTS[entryPoint];
  if (wantsHelp(argv)) {
    io.stdout.write(`${helpText(entryPoint)}\n`);
    return 0;
  }
  try {
    const outcome = await main(parseOptions(entryPoint, argv));
    const finished: Finished = typeof outcome === 'number' ? { exitCode: outcome } : (outcome ?? {});
    if (finished.report) {
      io.stdout.write(`${reportPathLines({ report: finished.report, page: finished.page }).join('\n')}\n`);
    }
    return finished.exitCode ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`error: ${error.message}\nRun \`${command} --help\` for the options.\n`);
      return 2;
    }
    io.stderr.write(`${describeFailure(error, settings)}\n`);
    return 1;
  }
}

/**
 * The entry point's whole life: parse, run, print, exit. `keepAlive` says the process is already
 * being stopped by its own signal handler, which exits when it is done.
 */
export function runEntryPoint<E extends EntryPointName>(
  entryPoint: E,
  main: (options: ParsedOptions<E>) => Outcome | Promise<Outcome>,
  settings: EntryPointSettings & { readonly keepAlive?: () => boolean } = {},
): void {
  // Node 20 is what these machines run; the SDK's notice about its future Node 22 floor is known.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  runToExitCode(entryPoint, process.argv.slice(2), main, process, settings)
    .catch((error: unknown) => {
      process.stderr.write(`${describeFailure(error, settings)}\n`);
      return 1;
    })
    .then((code) => {
      if (!settings.keepAlive?.()) process.exit(code);
    });
}

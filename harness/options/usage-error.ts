/**
 * An invalid command line, or a request the target cannot honour: the entry point prints the
 * message and a hint to --help, and exits 2 (harness/options/run.ts).
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

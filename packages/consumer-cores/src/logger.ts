import { consoleOut } from './runtime.js';

/**
 * The logging a core does, as an interface: Powertools' Logger fits it, and so does a three-line
 * wrapper of any other logger. Lines name the event, never its payload.
 */
export interface ConsumerLogger {
  info(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
  error(message: string, attributes: Record<string, unknown>): void;
}

/** JSON lines on stdout/stderr, the shape CloudWatch Logs Insights reads. */
export const jsonLogger: ConsumerLogger = {
  info: (message, attributes) => consoleOut.log(JSON.stringify({ level: 'INFO', message, ...attributes })),
  warn: (message, attributes) => consoleOut.warn(JSON.stringify({ level: 'WARN', message, ...attributes })),
  error: (message, attributes) =>
    consoleOut.error(JSON.stringify({ level: 'ERROR', message, ...attributes })),
};

/**
 * The team's signals, each awaited as before, but one that throws (a metrics outage) is logged and
 * never fails its record: a duplicate already applied must not be dead-lettered for a metric.
 */
export function guardedSignals<S extends object>(signals: S | undefined, logger: ConsumerLogger): S {
  const guarded: Record<string, (...args: unknown[]) => Promise<void>> = {};
  for (const [name, signal] of Object.entries(signals ?? {})) {
    if (typeof signal !== 'function') continue;
    guarded[name] = async (...args) => {
      try {
        await signal(...args);
      } catch (error) {
        logger.warn('a signal failed; the record goes on', { signal: name, error: describeError(error) });
      }
    };
  }
  return guarded as S;
}

/** The error as a log field: its name and message, not its stack or its cause's payload. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

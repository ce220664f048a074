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

/** The error as a log field: its name and message, not its stack or its cause's payload. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

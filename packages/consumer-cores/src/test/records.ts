/** The cores' own tests' helpers: the testing entry's record builders, and a clock and a logger. */
export { sqsEvent as batch, sqsRecord as record } from '../testing/sqs.js';

export const NOW = Date.UTC(2026, 0, 1);

/** A logger that keeps its lines, so a test can read what a team would alarm on. */
export function memoryLogger() {
  const lines: { level: string; message: string; attributes: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, attributes: Record<string, unknown>) =>
    void lines.push({ level, message, attributes });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

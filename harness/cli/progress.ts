import type { Writable } from 'node:stream';
import type { DrainSnapshot } from '../experiment/drain.js';
import type { ExperimentProgress } from '../experiment/experiment.js';
import { formatProgress } from '../report/terminal.js';

/**
 * Progress on stderr (stdout is kept for the result): a live, rewritten line on a terminal, and
 * plain lines every few seconds when the output is a file or a CI log.
 */
export function createProgress(
  stream: Writable & { isTTY?: boolean; columns?: number },
  options: { readonly plainEveryMs?: number } = {},
): ExperimentProgress & { done(): void } {
  const tty = stream.isTTY === true;
  const plainEveryMs = options.plainEveryMs ?? 5000;
  let lastPlain = 0;
  let liveLine = false;

  const clearLive = () => {
    if (liveLine) stream.write('\r\x1b[2K');
    liveLine = false;
  };

  return {
    phase(message) {
      clearLive();
      stream.write(`• ${message}\n`);
    },
    drain(snapshot: DrainSnapshot) {
      const line = formatProgress(snapshot);
      if (tty) {
        const width = stream.columns ?? 120;
        stream.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
        liveLine = true;
      } else if (snapshot.elapsedMs - lastPlain >= plainEveryMs) {
        lastPlain = snapshot.elapsedMs;
        stream.write(`${line}\n`);
      }
    },
    done() {
      clearLive();
    },
  };
}

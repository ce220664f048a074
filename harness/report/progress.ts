import type { Writable } from 'node:stream';
import type { Mode } from '../../contract/topology.js';
import type { DrainSnapshot } from '../run/drain.js';
import type { ExperimentProgress } from '../run/experiment.js';
import { formatProgress, progressLegend } from './progress-line.js';

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
  let legendShown = false;

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
      if (!legendShown) {
        // Once, before the first progress line: what its words and abbreviations count.
        legendShown = true;
        clearLive();
        stream.write(`• ${progressLegend(Object.keys(snapshot.modes) as Mode[])}\n`);
      }
      const full = formatProgress(snapshot);
      if (tty) {
        const width = stream.columns ?? 120;
        // Narrower than the line: the compact form (the legend above it says both).
        const line = full.length > width ? formatProgress(snapshot, { compact: true }) : full;
        stream.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
        liveLine = true;
      } else if (snapshot.elapsedMs - lastPlain >= plainEveryMs) {
        lastPlain = snapshot.elapsedMs;
        stream.write(`${full}\n`);
      }
    },
    done() {
      clearLive();
    },
  };
}

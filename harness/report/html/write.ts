/** Writing the page next to the run's JSON, and opening it for `--open`. */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type DetailedReport, type RunReportOptions, renderRunReport } from './render.js';

/**
 * Writes `<runId>.html` into the folder of the JSON report (reports/ from the CLI) and returns its
 * path. `replayCommand` is what the page tells a reader to type.
 */
export async function writeRunReport(report: DetailedReport, options: RunReportOptions): Promise<string> {
  const path = join(dirname(options.reportJsonPath), `${report.runId}.html`);
  writeFileSync(path, await renderRunReport(report, options));
  return path;
}

/** The platform's "open this file" command, or undefined where there is none to try. */
export function openCommand(platform: NodeJS.Platform = process.platform): readonly string[] | undefined {
  if (platform === 'darwin') return ['open'];
  // `start` is a cmd built-in; its first quoted argument is a window title, hence the empty one.
  if (platform === 'win32') return ['cmd', '/c', 'start', '""'];
  if (platform === 'linux' || platform === 'freebsd' || platform === 'openbsd') return ['xdg-open'];
  return undefined;
}

/**
 * Opens the page in the user's browser for `--open`. Never fails the run: where no opener exists
 * (a server, CI, a container) it says where the file is instead. Resolves with what it told the user.
 */
export function openInBrowser(
  path: string,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  platform: NodeJS.Platform = process.platform,
): Promise<string> {
  const fallback = `no browser opener here; open ${path} in a browser`;
  const command = openCommand(platform);
  if (!command) {
    log(fallback);
    return Promise.resolve(fallback);
  }
  const [program, ...args] = command;
  return new Promise((resolve) => {
    let settled = false;
    const done = (message: string) => {
      if (settled) return;
      settled = true;
      log(message);
      resolve(message);
    };
    try {
      const child = spawn(program ?? '', [...args, path], { stdio: 'ignore', detached: true });
      child.once('error', () => done(fallback));
      // An opener with no browser behind it (xdg-open on a server) exits non-zero at once; one
      // that found a browser exits 0, or keeps running while it does: then the run does not wait.
      child.once('exit', (code) => done(code === 0 ? `opened ${path}` : fallback));
      setTimeout(() => {
        child.unref();
        done(`opened ${path}`);
      }, OPENER_GRACE_MS).unref();
    } catch {
      done(fallback);
    }
  });
}

/** How long to wait for the opener to fail before assuming it found a browser. */
const OPENER_GRACE_MS = 2_000;

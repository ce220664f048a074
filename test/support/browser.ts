/**
 * A Chrome or Chromium for the browser tests, found where people have one: CHROME_PATH first, then
 * the usual places on Linux and macOS. playwright-core drives it; it downloads no browser itself.
 * Without one the browser tests are skipped with one loud line that says how to get one, except
 * under CI=true, where they fail: a CI machine without a browser is a broken CI machine.
 */
import { accessSync, constants, readFileSync, realpathSync, statSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** The environment variable that names the browser executable, and wins over every usual place. */
export const CHROME_PATH = 'CHROME_PATH';

/**
 * Where Chromium and Google Chrome are installed, most likely first. Linux: Debian's and Fedora's
 * chromium, the chromium-browser name (Alpine, older Debian; on Ubuntu a wrapper around the snap),
 * Google Chrome's .deb/.rpm (its links, then the binary), Ubuntu's snap last: it runs confined and
 * refuses a profile under /tmp, where Playwright puts one. macOS: the application bundles, system-wide
 * (brew install --cask puts them there) and then the user's own.
 */
export function browserCandidates(platform: NodeJS.Platform, home = ''): readonly string[] {
  if (platform === 'linux') {
    return [
      '/usr/bin/chromium',
      '/usr/bin/chromium-browser',
      '/usr/bin/google-chrome',
      '/usr/bin/google-chrome-stable',
      '/opt/google/chrome/chrome',
      '/snap/bin/chromium',
    ];
  }
  if (platform === 'darwin') {
    const bundles = [
      'Google Chrome.app/Contents/MacOS/Google Chrome',
      'Chromium.app/Contents/MacOS/Chromium',
    ];
    return [
      ...bundles.map((bundle) => `/Applications/${bundle}`),
      ...(home ? bundles.map((bundle) => `${home}/Applications/${bundle}`) : []),
    ];
  }
  return [];
}

/** How to get a browser, for the line that says there is none. */
export const INSTALL_HINT =
  'install one (Debian/Ubuntu: apt install chromium; macOS: brew install --cask chromium) ' +
  `or set ${CHROME_PATH} to a Chrome or Chromium executable`;

export type Discovery =
  /** Executables to try, in order (only CHROME_PATH's when it is set). */
  | { readonly found: true; readonly paths: readonly string[] }
  | { readonly found: false; readonly reason: string };

export interface DiscoveryOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
  readonly home?: string;
  readonly isExecutable?: (path: string) => boolean;
  /** Places to look instead of the usual ones (tests). */
  readonly candidates?: readonly string[];
}

export function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The browsers there are, without starting any. CHROME_PATH, when set (and not empty), is the only
 * one: a browser asked for by name that is not there is a mistake to report, not a reason to pick
 * another one.
 */
export function discoverBrowsers(options: DiscoveryOptions = {}): Discovery {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const isExecutable = options.isExecutable ?? isExecutableFile;
  const chosen = env[CHROME_PATH];
  if (chosen) {
    return isExecutable(chosen)
      ? { found: true, paths: [chosen] }
      : { found: false, reason: `${CHROME_PATH}=${chosen} is not an executable file` };
  }
  const candidates = options.candidates ?? browserCandidates(platform, options.home ?? env.HOME ?? '');
  const paths = candidates.filter((path) => isExecutable(path));
  if (paths.length > 0) return { found: true, paths };
  return {
    found: false,
    reason:
      candidates.length > 0
        ? `no Chrome or Chromium: ${CHROME_PATH} is not set and none of ${candidates.join(', ')} exists`
        : `no Chrome or Chromium: ${CHROME_PATH} is not set and this platform (${platform}) has no usual place for one`,
  };
}

/** CI=true (or 1): the browser tests must run, so a missing browser fails them. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(true|1)$/i.test(env.CI ?? '');
}

/**
 * What to do without a browser: under CI, fail with the reason; elsewhere, skip with one loud line
 * that says why and how to get one.
 */
export function withoutBrowser(
  what: string,
  reason: string,
  env: NodeJS.ProcessEnv = process.env,
): { readonly action: 'fail' | 'skip'; readonly message: string } {
  return isCi(env)
    ? { action: 'fail', message: `${what} needs a browser and CI=true: ${reason}; ${INSTALL_HINT}` }
    : {
        action: 'skip',
        message: `⚠ SKIPPED ${what}: ${reason}; ${INSTALL_HINT} (under CI=true this fails)`,
      };
}

/**
 * Whether an executable is Ubuntu's snap Chromium: under /snap/, or a wrapper script that runs it
 * (Ubuntu's /usr/bin/chromium-browser).
 */
export function looksLikeSnap(path: string): boolean {
  try {
    if (realpathSync(path).startsWith('/snap/')) return true;
    // A wrapper is a short script; a browser binary is far larger and not worth reading.
    return statSync(path).size < 64 * 1024 && readFileSync(path, 'utf8').includes('/snap/');
  } catch {
    return path.startsWith('/snap/');
  }
}

/**
 * Why a browser that is there did not start, on one line: Playwright's first line, the exit code,
 * the last of what the browser itself wrote to stderr, and what to do about a snap.
 */
export function launchFailure(path: string, error: unknown, snap = looksLikeSnap(path)): string {
  const message = error instanceof Error ? error.message : String(error);
  // Playwright's message: its own line, then "Browser logs:" (the browser's output, [pid=N][err]
  // for stderr), then "Call log:" (the same, colored).
  const lines = (message.split('\nCall log:')[0] ?? '').split('\n').map((line) => line.trim());
  const first = lines.find((line) => line !== '') ?? 'no error message';
  const stderr = lines
    .map((line) => /^\[pid=\d+\]\[err\]\s*(.*)$/.exec(line)?.[1]?.trim())
    .filter((line): line is string => line !== undefined && line !== '');
  const exitCode = /exitCode=(\d+)/.exec(message)?.[1];
  const said = stderr.length > 0 ? `; it said: ${stderr.slice(-2).join(' / ')}` : '';
  const hint = snap
    ? " (Ubuntu's snap Chromium cannot use a profile under /tmp: use Google Chrome or a non-snap Chromium)"
    : '';
  const exited = exitCode === undefined ? '' : ` (exit code ${exitCode})`;
  return `${path} is there but did not start${exited}: ${first}${said}${hint}`;
}

export type Launch =
  | { readonly browser: Browser; readonly executablePath: string }
  | { readonly unavailable: string };

/**
 * Starts the first browser that starts, in discovery order, headless and without Chromium's sandbox
 * (Chromium refuses to run as root with it, as the tests do here; the pages are the tests' own
 * files). `args` are extra Chromium switches.
 */
export async function launchBrowser(
  args: readonly string[] = [],
  options: DiscoveryOptions & { readonly timeoutMs?: number } = {},
): Promise<Launch> {
  const discovery = discoverBrowsers(options);
  if (!discovery.found) return { unavailable: discovery.reason };
  const failures: string[] = [];
  for (const executablePath of discovery.paths) {
    try {
      const browser = await chromium.launch({
        executablePath,
        headless: true,
        chromiumSandbox: false,
        args: [...args],
        timeout: options.timeoutMs ?? 60_000,
      });
      return { browser, executablePath };
    } catch (error) {
      failures.push(launchFailure(executablePath, error));
    }
  }
  return { unavailable: failures.join('; ') };
}

/**
 * A browser for `what`, or why there is none: under CI=true a missing browser is an error (thrown);
 * elsewhere the reason is printed once and returned, for the caller to skip with.
 */
export async function browserFor(
  what: string,
  args: readonly string[],
): Promise<{ readonly browser: Browser } | { readonly skipped: string }> {
  const launched = await launchBrowser(args);
  if (!('unavailable' in launched)) return { browser: launched.browser };
  const outcome = withoutBrowser(what, launched.unavailable);
  if (outcome.action === 'fail') throw new Error(outcome.message);
  console.warn(outcome.message);
  return { skipped: outcome.message };
}

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  browserCandidates,
  discoverBrowsers,
  INSTALL_HINT,
  isCi,
  isExecutableFile,
  launchBrowser,
  launchFailure,
  looksLikeSnap,
  withoutBrowser,
} from '../../support/browser.js';

const LINUX = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/opt/google/chrome/chrome',
  '/snap/bin/chromium',
];
const MAC_CHROME = '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome';
const MAC_CHROMIUM = '/Applications/Chromium.app/Contents/MacOS/Chromium';

/** A file system where exactly these paths are executables. */
const only =
  (...paths: string[]) =>
  (path: string) =>
    paths.includes(path);

describe('finding a browser (nothing launched)', () => {
  it('takes CHROME_PATH over every usual place', () => {
    const discovery = discoverBrowsers({
      env: { CHROME_PATH: '/opt/my/chrome' },
      platform: 'linux',
      isExecutable: only('/opt/my/chrome', ...LINUX),
    });
    expect(discovery).toEqual({ found: true, paths: ['/opt/my/chrome'] });
  });

  it('reports a CHROME_PATH that is not there, rather than quietly using another browser', () => {
    const discovery = discoverBrowsers({
      env: { CHROME_PATH: '/nonexistent' },
      platform: 'linux',
      isExecutable: only(...LINUX),
    });
    expect(discovery).toEqual({ found: false, reason: 'CHROME_PATH=/nonexistent is not an executable file' });
  });

  it('treats an empty CHROME_PATH as unset', () => {
    const discovery = discoverBrowsers({
      env: { CHROME_PATH: '' },
      platform: 'linux',
      isExecutable: only('/usr/bin/chromium'),
    });
    expect(discovery).toEqual({ found: true, paths: ['/usr/bin/chromium'] });
  });

  it("looks in Linux's usual places in order: Chromium, Google Chrome, the snap last", () => {
    expect(browserCandidates('linux')).toEqual(LINUX);
    const discovery = discoverBrowsers({
      env: {},
      platform: 'linux',
      isExecutable: only('/snap/bin/chromium', '/usr/bin/google-chrome-stable', '/usr/bin/chromium-browser'),
    });
    expect(discovery).toEqual({
      found: true,
      paths: ['/usr/bin/chromium-browser', '/usr/bin/google-chrome-stable', '/snap/bin/chromium'],
    });
  });

  it("looks in macOS's application bundles: Chrome, then Chromium, system-wide, then the user's", () => {
    expect(browserCandidates('darwin', '/Users/me')).toEqual([
      MAC_CHROME,
      MAC_CHROMIUM,
      `/Users/me${MAC_CHROME}`,
      `/Users/me${MAC_CHROMIUM}`,
    ]);
    const discovery = discoverBrowsers({
      env: { HOME: '/Users/me' },
      platform: 'darwin',
      isExecutable: only(`/Users/me${MAC_CHROMIUM}`),
    });
    expect(discovery).toEqual({ found: true, paths: [`/Users/me${MAC_CHROMIUM}`] });
  });

  it('says where it looked when there is no browser', () => {
    const discovery = discoverBrowsers({ env: {}, platform: 'linux', isExecutable: only() });
    expect(discovery).toEqual({
      found: false,
      reason: `no Chrome or Chromium: CHROME_PATH is not set and none of ${LINUX.join(', ')} exists`,
    });
    expect(discoverBrowsers({ env: {}, platform: 'win32', isExecutable: only() })).toEqual({
      found: false,
      reason:
        'no Chrome or Chromium: CHROME_PATH is not set and this platform (win32) has no usual place for one',
    });
  });
});

describe('without a browser', () => {
  it('skips with one loud line that says how to install one, outside CI', () => {
    const outcome = withoutBrowser('the browser test', 'no Chrome or Chromium', {});
    expect(outcome.action).toBe('skip');
    expect(outcome.message).not.toContain('\n');
    expect(outcome.message).toMatch(/^⚠ SKIPPED the browser test: no Chrome or Chromium; /);
    for (const way of ['apt install chromium', 'brew install --cask chromium', 'set CHROME_PATH'])
      expect(outcome.message).toContain(way);
    expect(INSTALL_HINT).toContain('CHROME_PATH');
  });

  it('fails under CI, with the reason and how to install one', () => {
    for (const CI of ['true', 'TRUE', '1']) {
      const outcome = withoutBrowser(
        'the browser test',
        'CHROME_PATH=/nonexistent is not an executable file',
        {
          CI,
        },
      );
      expect(outcome).toEqual({
        action: 'fail',
        message: `the browser test needs a browser and CI=true: CHROME_PATH=/nonexistent is not an executable file; ${INSTALL_HINT}`,
      });
    }
    expect([undefined, '', 'false', '0'].map((CI) => isCi(CI === undefined ? {} : { CI }))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('a browser that is there but does not start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'browser-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string, mode: number) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };

  it("gives Playwright's first line, the exit code, what the browser said, and what to do about a snap", () => {
    // The shape of playwright-core 1.65's message for a browser that exits at once (launch args cut).
    const error = new Error(
      [
        'browserType.launch: Target page, context or browser has been closed',
        'Browser logs:',
        '',
        '<launching> /snap/bin/chromium --disable-field-trial-config --headless --no-sandbox',
        '<launched> pid=19188',
        '[pid=19188][err] mkdir: cannot create directory /tmp/playwright_chromiumdev_profile-x',
        '[pid=19188][err] Permission denied',
        'Call log:',
        '  - [pid=19188][err] Permission denied',
        '  - [pid=19188] <process did exit: exitCode=1, signal=null>',
      ].join('\n'),
    );
    expect(launchFailure('/snap/bin/chromium', error, true)).toBe(
      '/snap/bin/chromium is there but did not start (exit code 1): ' +
        'browserType.launch: Target page, context or browser has been closed; ' +
        'it said: mkdir: cannot create directory /tmp/playwright_chromiumdev_profile-x / Permission denied ' +
        "(Ubuntu's snap Chromium cannot use a profile under /tmp: use Google Chrome or a non-snap Chromium)",
    );
    expect(launchFailure('/usr/bin/chromium', new Error('Timeout 60000ms exceeded.'), false)).toBe(
      '/usr/bin/chromium is there but did not start: Timeout 60000ms exceeded.',
    );
  });

  it('tries the browsers in order, and gives each one that did not start (fake ones, no browser launched)', async () => {
    const failing = (name: string, said: string) =>
      file(name, `#!/bin/sh\necho "${said}" >&2\nexit 3\n`, 0o755);
    const first = failing('first', 'first refuses');
    const second = failing('second', 'second refuses');
    const launched = await launchBrowser([], { env: {}, candidates: [first, join(dir, 'absent'), second] });
    // Playwright's own first line varies with its version; the rest is ours.
    const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const failed = (path: string, said: string) =>
      `${literal(path)} is there but did not start \\(exit code 3\\): [^;]+; it said: ${said}`;
    expect(launched).toEqual({
      unavailable: expect.stringMatching(
        new RegExp(`^${failed(first, 'first refuses')}; ${failed(second, 'second refuses')}$`),
      ),
    });
  });

  it("recognises Ubuntu's snap, and the wrapper script that runs it", () => {
    const wrapper = file('chromium-browser', '#!/bin/sh\nexec /snap/bin/chromium "$@"\n', 0o755);
    const plain = file('chromium', '#!/bin/sh\nexec /usr/lib/chromium/chromium "$@"\n', 0o755);
    expect(looksLikeSnap(wrapper)).toBe(true);
    expect(looksLikeSnap(plain)).toBe(false);
    expect(looksLikeSnap('/snap/bin/not-on-this-machine')).toBe(true);
  });

  it('counts only executable files as browsers', () => {
    expect(isExecutableFile(file('runs', '#!/bin/sh\n', 0o755))).toBe(true);
    expect(isExecutableFile(file('does-not-run', 'text', 0o644))).toBe(false);
    expect(isExecutableFile(dir)).toBe(false);
    expect(isExecutableFile(join(dir, 'absent'))).toBe(false);
  });
});

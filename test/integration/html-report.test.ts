/**
 * The per-run HTML report in a real browser: a Chrome or Chromium found where people have one
 * (CHROME_PATH, then the usual places: test/support/browser.ts) driven by playwright-core, on a
 * report from a real fixed-seed embedded run (emulators, handler processes, SIGKILLs, the verifier's
 * per-event detail). Checks what a reader relies on: the cells match the JSON, hover and keyboard
 * show an event, the page asks the network for nothing and logs no error. Screenshots land in
 * reports/screenshots/ (a test artifact, gitignored); with UPDATE_DOCS_SCREENSHOT=1 the README's
 * docs/report-screenshot.png is refreshed from the same page. Without a browser the tests are
 * skipped with one line that says how to get one; under CI=true they fail instead.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Mode } from '../../contract/topology.js';
import type { DetailedReport } from '../../harness/report/html/render.js';
import { writeRunReport } from '../../harness/report/html/write.js';
import { PROJECT_ROOT } from '../../stack/bundling.js';
import { browserFor } from '../support/browser.js';
import { experimentConfig, replayCommand, runEmbedded } from '../support/embedded-run.js';

const SCREENSHOTS = join(PROJECT_ROOT, 'reports', 'screenshots');

const CONFIG = experimentConfig({
  messages: 100,
  crashRate: 0.05,
  seed: 'html-report',
  // Poison is dead-lettered after maxReceiveCount receives, a visibility timeout apart: 5 instead of 10
  // halves the run; lower, a batch that crashes that many times in a row would be dead-lettered too.
  maxReceiveCount: 5,
  faults: { poisonRate: 0.03 },
});

/** A real fixed-seed run; one without per-event detail is a regression, not a reason to use a fixture. */
async function reportForTheBrowser(): Promise<{ report: DetailedReport; replay: string }> {
  const { report, env } = await runEmbedded(CONFIG);
  await env.stop();
  if (!report.manifest)
    throw new Error(`the run has no per-event detail: ${report.eventsOmitted ?? 'no reason given'}`);
  return { report, replay: replayCommand(CONFIG) };
}

/** Cells per state character, as the JSON says: the states, plus one 'e' per unexpected id. */
function expectedCells(report: DetailedReport, mode: Mode): Record<string, number> {
  const events = report.modes[mode]?.events;
  if (!events) throw new Error(`${mode} has no per-event detail`);
  const counts: Record<string, number> = {};
  for (const state of events.states) counts[state] = (counts[state] ?? 0) + 1;
  if (events.unexpectedEventIds.length > 0) counts.e = events.unexpectedEventIds.length;
  return counts;
}

describe('the HTML report in a real browser', () => {
  let browser: Browser | undefined;
  /** Why there is no browser to test with, when there is none (and CI is not set). */
  let skipped: string | undefined;
  let page: Page;
  let report: DetailedReport;
  let fileUrl: string;
  const requests: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    // The browser first: without one, the run it would look at is not worth making.
    const launched = await browserFor('the HTML report browser test', [
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ]);
    if ('skipped' in launched) {
      skipped = launched.skipped;
      return;
    }
    browser = launched.browser;
    const built = await reportForTheBrowser();
    report = built.report;
    mkdirSync(SCREENSHOTS, { recursive: true });
    const jsonPath = join(SCREENSHOTS, `${report.runId}.json`);
    writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
    const htmlPath = await writeRunReport(report, { reportJsonPath: jsonPath, replayCommand: built.replay });
    fileUrl = `file://${htmlPath}`;

    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(fileUrl, { waitUntil: 'load' });
  }, 240_000);

  beforeEach(({ skip }) => {
    if (skipped) skip(skipped);
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('has one cell per event and state in each grid, as many as the JSON and the legend say', async () => {
    for (const mode of Object.keys(report.modes) as Mode[]) {
      const grid = page.locator(`section.mode[data-mode="${mode}"]`);
      const expected = expectedCells(report, mode);
      const shown: Record<string, number> = {};
      for (const state of ['o', 'd', 'l', 'x', 'h', 'a', 'p', 'q', 'u', 'e']) {
        const cells = await grid.locator(`[role="gridcell"].c.${state}`).count();
        if (cells > 0) shown[state] = cells;
        const legend = await grid.locator(`.counts [data-state="${state}"] .n`).textContent();
        expect(Number(legend?.replace(/,/g, '')), `${mode} legend for ${state}`).toBe(cells);
      }
      expect(shown, mode).toEqual(expected);
      // And they add up to the verifier's counts: poison lost is lost, poison dead-lettered is dead-lettered.
      const outcome = report.modes[mode];
      expect((shown.l ?? 0) + (shown.q ?? 0), `${mode} lost`).toBe(outcome?.lost);
      expect((shown.x ?? 0) + (shown.h ?? 0) + (shown.p ?? 0), `${mode} dead-lettered`).toBe(
        outcome?.deadLettered,
      );
      // Applied once or several times, dead-lettered afterwards or not: the verifier's applied counts.
      const applications = report.modes[mode]?.events?.applications ?? [];
      const states = report.modes[mode]?.events?.states ?? '';
      const appliedWith = (n: (count: number) => boolean) =>
        [...states].filter((state, index) => 'oda'.includes(state) && n(applications[index] ?? 0)).length;
      expect(
        appliedWith((count) => count === 1),
        `${mode} applied once`,
      ).toBe(outcome?.appliedOnce);
      expect(
        appliedWith((count) => count > 1),
        `${mode} duplicated`,
      ).toBe(outcome?.duplicated);
    }
  });

  it('shows an event when its cell is hovered: id, account, amount, state, applications, receives, crashes', async () => {
    const events = report.modes['at-least-once']?.events;
    const manifest = report.manifest;
    if (!events || !manifest) throw new Error('at-least-once has per-event detail');
    // The most telling cell: a duplicate if there is one, else the first event.
    const index = Math.max(events.states.indexOf('d'), 0);
    const cell = page.locator('section.mode[data-mode="at-least-once"] [role="gridcell"]').nth(index);
    await cell.hover();
    const tip = page.locator('#tip');
    await expect.poll(() => tip.isVisible()).toBe(true);
    const text = (await tip.textContent()) ?? '';
    expect(text).toContain(manifest.eventIds[index]);
    expect(text).toContain(`account${manifest.accountIds[index]}`);
    expect(text).toContain(`applications${events.applications[index]}`);
    // The receives that applied it and the crashes that hit it, as the JSON has them.
    for (const receive of (events.receiveCounts[index] ?? '').split(',').filter(Boolean))
      expect(text).toMatch(new RegExp(`applied at receive[^a-z]*?(?<![0-9])${receive}(?![0-9])`));
    const crashes = (events.crashes[index] ?? '').split(',').filter(Boolean);
    if (crashes.length === 0) expect(text).toMatch(/crashes\s*none/);
    for (const receive of crashes)
      expect(text).toMatch(new RegExp(`crashes(?:at receive [0-9]+, )*at receive ${receive}(?![0-9])`));
    expect(text).toContain(
      events.states[index] === 'd' ? `duplicated ×${events.applications[index]}` : 'applied',
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'report-hover.png') });
  });

  it('moves between events with the arrow keys and shows the focused one', async () => {
    const manifest = report.manifest;
    if (!manifest) throw new Error('the report has a manifest');
    const grid = page.locator('section.mode[data-mode="at-most-once"] [role="grid"]');
    await page.mouse.move(0, 0);
    await grid.locator('[role="gridcell"][tabindex="0"]').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    const columns = Number(await grid.getAttribute('data-cols'));
    const focused = page.locator(':focus');
    expect(await focused.getAttribute('aria-label')).toContain(manifest.eventIds[1 + columns]);
    expect(await page.locator('#tip').textContent()).toContain(manifest.eventIds[1 + columns]);
    // One tab stop per grid: the focused cell holds it now.
    expect(await grid.locator('[tabindex="0"]').count()).toBe(1);
    // A click moves the tab stop to the clicked cell; the keys go on from there.
    await grid.locator('[role="gridcell"]').nth(5).click();
    await page.keyboard.press('ArrowRight');
    expect(await page.locator(':focus').getAttribute('aria-label')).toContain(manifest.eventIds[6]);
    expect(await grid.locator('[tabindex="0"]').count()).toBe(1);
  });

  it('made no network request (only its own file) and logged no error', async () => {
    expect(requests).toEqual([fileUrl]);
    expect(errors).toEqual([]);
  });

  it('saves a screenshot of the page', async () => {
    await page.mouse.move(0, 0);
    await page.evaluate('document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)');
    expect(await page.locator('#tip').isHidden()).toBe(true);
    const full = join(SCREENSHOTS, `${report.runId}.png`);
    await page.screenshot({ path: full, fullPage: true });
    expect(existsSync(full)).toBe(true);
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1') {
      // The README's picture: the top of the page down to the first grid, a lost event's details open.
      const states = report.modes['at-most-once']?.events?.states ?? '';
      await page.setViewportSize({ width: 1280, height: 1320 });
      await page.evaluate('window.scrollTo(0, 0)');
      await page
        .locator('section.mode[data-mode="at-most-once"] [role="gridcell"]')
        .nth(Math.max(states.indexOf('l'), 0))
        .hover();
      const readme = join(SCREENSHOTS, 'readme.png');
      await page.screenshot({ path: readme });
      copyFileSync(readme, join(PROJECT_ROOT, 'docs', 'report-screenshot.png'));
    }
  });
});

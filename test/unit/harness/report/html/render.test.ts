import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Mode } from '../../../../../contract/topology.js';
import { type DetailedReport, renderRunReport } from '../../../../../harness/report/html/render.js';
import { openCommand, openInBrowser, writeRunReport } from '../../../../../harness/report/html/write.js';
import { formatTable } from '../../../../../harness/report/result-table.js';
import { leadWithFinalState } from '../../../../../harness/run/redrive.js';
import type { ManifestDetails, ModeEventDetails } from '../../../../../verifier/event-details.js';
import { detailedReportFixture } from '../../../../support/run-report-fixture.js';

const OPTIONS = { reportJsonPath: 'reports/run.json', replayCommand: 'npm run experiment -- --seed unit' };

/** Every state the verifier can give, in one mode; ids chosen to be awkward in HTML. */
const MANIFEST: ManifestDetails = {
  eventIds: ['evt-0', 'evt-1', 'evt-2', 'evt-3', 'evt-4', 'evt-5', 'evt-6', 'evt-7', '</script><b>x'],
  accountIds: ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c'],
  amountCents: [100, 200, 300, 400, 500, 600, 700, 800, 900],
  poison: [null, null, null, null, null, 'wrong-type', 'wrong-type', 'wrong-type', null],
};

function details(states: string, applications: number[], unexpected: string[] = []): ModeEventDetails {
  return {
    states,
    applications,
    receiveCounts: applications.map((count) => Array.from({ length: count }, (_, i) => i + 1).join(',')),
    crashes: applications.map((count) => (count > 1 ? '1' : '')),
    unexpectedEventIds: unexpected,
    unattributedCrashes: 0,
    timeline: { startMs: 1_000_000, bucketMs: 500, applications: [3, 2, 0, 4], crashes: [1, 0, 0, 0] },
  };
}

const EVENTS: Partial<Record<Mode, ModeEventDetails>> = {
  'at-most-once': details('olqoooqqo', [1, 0, 0, 1, 1, 0, 0, 0, 1]),
  'at-least-once': details('odxaopuqo', [1, 3, 0, 1, 1, 0, 1, 0, 1], ['evt-unknown-1', 'evt-unknown-2']),
};

function handMade(): DetailedReport {
  const base = detailedReportFixture({ events: 9 });
  const modes: DetailedReport['modes'] = {};
  for (const [mode, events] of Object.entries(EVENTS) as [Mode, ModeEventDetails][]) {
    const outcome = base.modes[mode];
    if (!outcome) throw new Error(`the fixture has no ${mode}`);
    modes[mode] = { ...outcome, events };
  }
  return {
    ...base,
    config: { ...base.config, modes: Object.keys(EVENTS) as Mode[] },
    manifest: MANIFEST,
    modes,
  };
}

/** The HTML of one mode's section of the page. */
function section(html: string, mode: string): string {
  const start = html.indexOf(`<section class="card mode" data-mode="${mode}"`);
  expect(start, `a section for ${mode}`).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf('</section>', start));
}

const cellStates = (html: string): string[] =>
  [...html.matchAll(/<i role="gridcell"[^>]*class="c (\w)">([^<]*)<\/i>/g)].map((match) => match[1] ?? '');

function legendCounts(html: string): Record<string, number> {
  return Object.fromEntries(
    [...html.matchAll(/data-state="(\w)">.*?<b class="n">([\d,]+)<\/b>/g)].map((match) => [
      match[1],
      Number((match[2] ?? '').replace(/,/g, '')),
    ]),
  );
}

describe('renderRunReport', () => {
  it('draws one cell per produced event per mode, in production order, then one per unexpected id', async () => {
    const html = await renderRunReport(handMade(), OPTIONS);
    for (const [mode, events] of Object.entries(EVENTS)) {
      expect(cellStates(section(html, mode)).join('')).toBe(
        events.states + 'e'.repeat(events.unexpectedEventIds.length),
      );
    }
  });

  it('shows the number of applications inside a duplicated cell, and a glyph in every other non-plain one', async () => {
    const alo = section(await renderRunReport(handMade(), OPTIONS), 'at-least-once');
    const glyphs = [...alo.matchAll(/<i role="gridcell"[^>]*class="c (\w)">([^<]*)<\/i>/g)].map(
      (match) => `${match[1]}${match[2]}`,
    );
    expect(glyphs).toEqual(['o', 'd3', 'xD', 'aA', 'o', 'pP', 'u!', 'qP', 'o', 'e?', 'e?']);
  });

  it('leads a redrive run with the final state: its grid outlines the events applied and dead-lettered in the first drain, whose grid follows', async () => {
    const report = handMade();
    const alo = report.modes['at-least-once'];
    if (!alo) throw new Error('no at-least-once in the fixture');
    // The first drain: evt-3 applied and dead-lettered ('a'), evt-2 dead-lettered. After: evt-3 credited again.
    const after = {
      ...alo,
      lost: 0,
      deadLettered: 0,
      events: details('oddoopuqo', [1, 3, 1, 2, 1, 0, 1, 0, 1], ['evt-unknown-1', 'evt-unknown-2']),
    };
    const firstDrain = { ...alo, lost: 3, deadLettered: 1 };
    const html = await renderRunReport(
      { ...report, modes: { ...report.modes, 'at-least-once': leadWithFinalState(firstDrain, after, 2) } },
      OPTIONS,
    );
    const mode = section(html, 'at-least-once');
    const grids = mode.split('<div class="grid');
    expect(grids).toHaveLength(3);
    const cells = (grid: string | undefined) =>
      [...(grid ?? '').matchAll(/<i role="gridcell"[^>]*class="c (\w)( marked)?">/g)]
        .map((match) => `${match[1]}${match[2] ? '*' : ''}`)
        .join(' ');
    // First the final state, outlined; then the first drain, as it was.
    expect(cells(grids[1])).toBe('o d d o* o p u q o e e');
    expect(grids[2]).toContain('data-mode="at-least-once in the first drain"');
    expect(cells(grids[2])).toBe(
      cells(
        section(await renderRunReport(handMade(), OPTIONS), 'at-least-once').split('<div class="grid')[1],
      ),
    );
    expect(mode.indexOf('The first drain, before the redrive')).toBeGreaterThan(
      mode.indexOf('After the redrive, the final state'),
    );
    expect(mode).toContain(
      'After the redrive, 1 credited again, 0 skipped as already applied, 0 back in the DLQ',
    );
    // The card at the top shows the final state, and what the first drain said.
    const card = html.slice(
      html.indexOf('<article class="card'),
      html.indexOf('</article>', html.indexOf('<h2>at-least-once</h2>')),
    );
    expect(card.slice(card.indexOf('<h2>at-least-once</h2>'))).toContain(
      'After the redrive. The first drain: 3 lost',
    );
    const data = JSON.parse(
      /<script type="application\/json" id="run-data">(.*?)<\/script>/s.exec(html)?.[1] ?? '{}',
    );
    expect(data.modes['at-least-once'].states).toBe('oddoopuqo');
    expect(data.modes['at-least-once in the first drain'].states).toBe(alo.events?.states);
  });

  it('marks the events applied after a later event of their account with a corner, and counts them in the legend', async () => {
    const report = handMade();
    const alo = report.modes['at-least-once'];
    if (!alo?.events) throw new Error('no at-least-once detail in the fixture');
    const html = await renderRunReport(
      {
        ...report,
        modes: {
          ...report.modes,
          'at-least-once': { ...alo, events: { ...alo.events, outOfOrder: [0, 4] } },
        },
      },
      OPTIONS,
    );
    const mode = section(html, 'at-least-once');
    const late = [...mode.matchAll(/<i role="gridcell"[^>]*class="c (\w)( marked)?( late)?">/g)].map(
      (match) => Boolean(match[3]),
    );
    expect(late.slice(0, 6)).toEqual([true, false, false, false, true, false]);
    expect(mode).toMatch(
      /data-mark="late".*applied after a later event of its account<\/span> <b class="n">2<\/b>/,
    );
  });

  it("gives each mode's legend the counts of its JSON states", async () => {
    const html = await renderRunReport(handMade(), OPTIONS);
    for (const [mode, events] of Object.entries(EVENTS)) {
      const expected: Record<string, number> = { o: 0, d: 0, l: 0, x: 0, h: 0, a: 0, p: 0, q: 0, u: 0 };
      for (const state of events.states) expected[state] = (expected[state] ?? 0) + 1;
      expected.e = events.unexpectedEventIds.length;
      expect(legendCounts(section(html, mode))).toEqual(expected);
    }
  });

  it('references nothing on the network: no http(s) src or href, no stylesheet or script from elsewhere', async () => {
    const html = await renderRunReport(detailedReportFixture(), OPTIONS);
    expect(html).not.toMatch(/\b(?:src|href|action|poster|srcset)\s*=\s*["']?\s*(?:https?:)?\/\//i);
    expect(html).not.toMatch(/url\(\s*["']?\s*(?:https?:)?\/\//i);
    expect(html).not.toMatch(/@import|<link\b|<script[^>]+src=|<iframe|<img\b/i);
    // The only URLs left are SVG's XML namespaces, which browsers never fetch.
    const urls = [...html.matchAll(/https?:\/\/[^\s"'<>)]+/g)].map((match) => match[0]);
    expect(new Set(urls)).toEqual(new Set(['http://www.w3.org/2000/svg', 'http://www.w3.org/1999/xlink']));
  });

  it('keeps the data safe inside its script element: an id cannot close it', async () => {
    const html = await renderRunReport(handMade(), OPTIONS);
    const data = html.slice(html.indexOf('<script type="application/json" id="run-data">'));
    const json = data.slice(data.indexOf('>') + 1, data.indexOf('</script>'));
    expect(JSON.parse(json).manifest.eventIds[8]).toBe('</script><b>x');
  });

  it('tells the drain round by round in its facts, as the terminal does', async () => {
    const fixture = detailedReportFixture();
    const drainRounds = [
      { receiveCount: 1, records: 800, failedBatches: 2, doneAtMs: 4_000 },
      { receiveCount: 2, records: 20, failedBatches: 0, doneAtMs: 7_000 },
    ];
    const html = await renderRunReport({ ...fixture, drainRounds }, OPTIONS);
    expect(html).toContain(
      '<dt>drain by delivery</dt><dd>1st (800 records) done at 4.0 s, 2 batches failed → 2nd (20) at 7.0 s',
    );
    expect(await renderRunReport(fixture, OPTIONS)).not.toContain('drain by delivery');
  });

  it('shows the numbers of the terminal table, with the same ! marks', async () => {
    const fixture = detailedReportFixture();
    const exact = fixture.modes['effectively-once'];
    if (!exact) throw new Error('the fixture has effectively-once');
    // A loss effectively-once cannot produce in a correct run: the terminal marks it, so must the page.
    const report = { ...fixture, modes: { ...fixture.modes, 'effectively-once': { ...exact, lost: 2 } } };
    const html = await renderRunReport(report, OPTIONS);
    const terminal = formatTable(report)
      .split('\n')
      .slice(2)
      .map((line) => line.trim().split(/\s{2,}/));
    const table = html.slice(html.indexOf('<table>'), html.indexOf('</table>'));
    const rows = [...table.matchAll(/<tr><th scope="row">(.*?)<\/tr>/g)].map((match) =>
      (match[1] ?? '')
        .split(/<\/t[hd]>/)
        .map((cell) => cell.replace(/<[^>]+>/g, '').trim())
        .filter((cell) => cell !== ''),
    );
    expect(rows).toEqual(terminal);
    expect(html).toContain('>2 !</mark>');
  });

  it('has the replay command, the seed and a timeline chart per mode, as inline SVG', async () => {
    const report = detailedReportFixture();
    const html = await renderRunReport(report, OPTIONS);
    expect(html).toContain('<code>npm run experiment -- --seed unit</code>');
    expect(html).toContain('<dt>seed</dt><dd>html-fixture</dd>');
    for (const mode of Object.keys(report.modes)) {
      expect(section(html, mode)).toMatch(/<div class="chart"><svg[^>]*>.*<\/svg><\/div>/s);
    }
  });

  it('shows a run without per-event detail as bars of the per-state counts, with the reason, and no cells', async () => {
    const small = detailedReportFixture({ events: 200, omitDetail: true });
    const large: DetailedReport = {
      ...small,
      config: { ...small.config, messages: 50_000 },
      modes: Object.fromEntries(
        Object.entries(small.modes).map(([mode, outcome]) => {
          const { eventsOmitted: _, ...counts } = outcome;
          return [mode, { ...counts, produced: 50_000, appliedOnce: 49_950, lost: 50 }];
        }),
      ),
    };
    const html = await renderRunReport(large, OPTIONS);
    expect(html).not.toContain('role="gridcell"');
    expect(html).not.toContain('id="run-data"');
    expect(html.length).toBeLessThan(400_000);
    for (const mode of Object.keys(large.modes)) {
      const start = html.indexOf(`<section class="card mode aggregated" data-mode="${mode}"`);
      expect(start).toBeGreaterThanOrEqual(0);
      const part = html.slice(start, html.indexOf('</section>', start));
      expect(part).toContain('50,000 events is more than the 20,000 per mode');
      expect(part).toMatch(/<svg[^>]*>.*49,950.*<\/svg>/s);
    }
    // The verifier's own reason wins when it gives one.
    const omitted = await renderRunReport(small, OPTIONS);
    expect(omitted).toContain('more than the 20,000 a report shows one by one');
  });
});

describe('writeRunReport', () => {
  const dir = mkdtempSync(join(tmpdir(), 'run-report-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes <runId>.html next to the JSON and links the JSON by its file name', async () => {
    const report = handMade();
    const path = await writeRunReport(report, {
      ...OPTIONS,
      reportJsonPath: join(dir, `${report.runId}.json`),
    });
    expect(path).toBe(join(dir, `${report.runId}.html`));
    expect(readFileSync(path, 'utf8')).toContain(`href="${report.runId}.json"`);
  });
});

describe('openInBrowser', () => {
  it('knows the opener of each desktop platform', () => {
    expect(openCommand('linux')).toEqual(['xdg-open']);
    expect(openCommand('darwin')).toEqual(['open']);
    expect(openCommand('win32')?.slice(0, 3)).toEqual(['cmd', '/c', 'start']);
  });

  it('says where the file is, and does not fail, where there is no opener', async () => {
    const lines: string[] = [];
    const said = await openInBrowser('reports/run.html', (line) => lines.push(line), 'aix');
    expect(said).toBe('no browser opener here; open reports/run.html in a browser');
    expect(lines).toEqual([said]);
  });
});

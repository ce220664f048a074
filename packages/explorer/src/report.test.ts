import { describe, expect, it } from 'vitest';
import type { Exploration, ExploredCell, TracedStep } from './explore.js';
import { cellText, formatExploration, renderExplorePage } from './report.js';
import { type PlannedFault, planText, stepKey } from './steps.js';

const update: TracedStep = {
  key: stepKey('line-1', 'UpdateItem', 1, 1),
  service: 'dynamodb',
  event: 'line-1',
  operation: 'UpdateItem',
  occurrence: 1,
  attempt: 1,
  delivery: 1,
};
const ack: TracedStep = {
  key: stepKey('batch', 'acknowledge', 1, 1),
  service: 'mapping',
  event: 'batch',
  operation: 'acknowledge',
  occurrence: 1,
  attempt: 1,
  delivery: 1,
};

function cell(
  faults: PlannedFault[],
  violations: string[],
  kind: ExploredCell['kind'] = 'single',
): ExploredCell {
  return {
    plan: planText(faults),
    faults,
    kind,
    violations,
    summary: violations[0] ?? 'exact',
    tone: violations.length > 0 ? 'broken' : 'exact',
    held: violations.length === 0,
    timedOut: false,
    landed: true,
    deliveries: [
      {
        delivery: 1,
        receiveCount: 1,
        events: ['line-1'],
        ended: 'killed',
        acknowledged: false,
        trace: [update],
      },
    ],
    cellId: 'cell-1',
  };
}

const lostTwice: PlannedFault[] = [
  { delivery: 1, step: update.key, fault: 'response-lost' },
  { delivery: 1, step: stepKey('line-1', 'UpdateItem', 1, 2), fault: 'response-lost' },
];
const exploration: Exploration = {
  scenario: 'reserve <stock>',
  promise: 'each line once',
  steps: [update, ack],
  clean: cell([], []),
  cells: [
    cell([{ delivery: 1, step: update.key, fault: 'killed-before' }], []),
    cell([{ delivery: 1, step: update.key, fault: 'response-lost' }], ['line-1 applied 2 times']),
    cell([{ delivery: 1, step: ack.key, fault: 'killed-before' }], ['line-1 applied 2 times']),
    cell(lostTwice, ['line-1 applied 3 times'], 'retry'),
  ],
  counts: { single: 3, retry: 1, pair: 0 },
  seconds: 1.25,
};

describe('the matrix', () => {
  it('states the promise, puts each cell at its step and fault, the retry cells below, and what each fault means', () => {
    const text = formatExploration(exploration);
    expect(text).toMatch(
      /^reserve <stock>: 4 cells \(3 single, 1 on a retry\) in 1\.3 s, the invariant broken in 3 cells/,
    );
    expect(text).toContain('  promise: each line once');
    expect(text).toMatch(/\n {2}UpdateItem line-1 +exact +line-1 applied 2 times ! +·\n/);
    expect(text).toMatch(/lost twice .*\n.*\n {4}UpdateItem line-1 +line-1 applied 3 times !/);
    expect(text).toContain('    ack not applied: the mapping');
    expect(text).toContain("    acknowledge: the handler's return, then the mapping's delete;");
    expect(text).toContain(`    replay: explorer.explore(scenario, { only: ['${planText(lostTwice)}'] })`);
  });

  it('marks a broken cell with !, a timed-out one as such', () => {
    expect(cellText({ summary: 'dup 1', held: false, timedOut: false })).toBe('dup 1 !');
    expect(cellText({ summary: 'exact', held: true, timedOut: true })).toBe('timed out');
  });

  it('the page: every cell coloured, broken ones outlined, the retry columns, the names escaped', () => {
    const page = renderExplorePage([exploration]);
    expect(page).toContain('<h2>reserve &#60;stock&#62;</h2>');
    expect(page.match(/class="xc broken"/g)).toHaveLength(3);
    expect(page).toContain('>lost twice</th>');
    expect(page).not.toContain('<stock>');
  });

  it("says when no promise is stated, and lists depth 2's broken pairs on the page", () => {
    const pair = cell(
      [
        { delivery: 1, step: update.key, fault: 'killed-before' },
        { delivery: 2, step: update.key, fault: 'response-lost' },
      ],
      ['line-1 applied 2 times'],
    );
    const { promise: _, ...unstated } = exploration;
    const withPairs: Exploration = {
      ...unstated,
      cells: [...exploration.cells, pair],
      counts: { single: 3, retry: 1, pair: 1 },
    };
    expect(formatExploration(withPairs)).toContain(
      "  promise: not stated: the invariant's violations judge each cell",
    );
    const page = renderExplorePage([
      { ...withPairs, cells: [...exploration.cells, { ...pair, kind: 'pair' }] },
    ]);
    expect(page).toContain('Depth 2: 1 pair, the invariant broken in 1.');
    expect(page).toContain(`<th class="step">${planText(pair.faults)}</th>`);
  });
});

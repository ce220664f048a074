import { describe, expect, it } from 'vitest';
import type { ExperimentReport } from '../../../../../harness/run/experiment.js';
import { pointsOf, summarise } from '../../../../../harness/studies/sweep/sweep-data.js';
import { renderSweepPage } from '../../../../../harness/studies/sweep/sweep-page.js';

const outcome = (lost: number, extra: number, deliveries: number, throughput: number) => ({
  lost,
  extraApplications: extra,
  deliveries,
  crashes: 2,
  throughputPerSecond: throughput,
});

function report(seed: string, lost: number): ExperimentReport {
  return {
    config: { messages: 200, crashRate: 0.02, seed },
    modes: {
      'at-most-once': outcome(lost, 0, 200, 12),
      'at-least-once': outcome(0, 10, 240, 5),
    },
  } as unknown as ExperimentReport;
}

describe('the batch-size sweep', () => {
  it('reduces each run to counts per 1,000 messages and each setting to the median of its runs, with the range', () => {
    const points = [
      ...pointsOf(report('a', 10), 10, 30),
      ...pointsOf(report('b', 30), 10, 32),
      ...pointsOf(report('c', 20), 10, 31),
    ];
    const cells = summarise(points);
    const amo = cells.find((cell) => cell.mode === 'at-most-once');
    expect(amo).toMatchObject({ batchSize: 10, crashRate: 0.02, runs: 3 });
    expect(amo?.median.lostPer1000).toBe(100);
    expect(amo?.min.lostPer1000).toBe(50);
    expect(amo?.max.lostPer1000).toBe(150);
    expect(cells.find((cell) => cell.mode === 'at-least-once')?.median).toMatchObject({
      duplicatesPer1000: 50,
      deliveriesPer1000: 1200,
    });
  });

  it('renders a self-contained page: static SVG charts, no script, no remote resource', async () => {
    const cells = summarise([...pointsOf(report('a', 10), 1, 30), ...pointsOf(report('b', 40), 10, 30)]);
    const html = await renderSweepPage({
      createdAt: 't',
      command: 'npm run sweep',
      messages: 200,
      cells,
      table: 'x',
    });
    expect(html.match(/<svg/g)).toHaveLength(4);
    expect(html).not.toMatch(/<script/);
    expect(html).not.toMatch(/(src|href)="https?:/);
  });
});

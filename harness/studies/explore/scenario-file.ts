import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type Exploration,
  type ExploredCell,
  formatExploration,
  PlanError,
  type Scenario,
  ScenarioError,
  startExplorer,
  writeReport,
} from '@sqs-delivery-semantics/explorer';
import { PROJECT_ROOT } from '../../../stack/bundling.js';
import type { Finished } from '../../options/run.js';
import { UsageError } from '../../options/usage-error.js';

/**
 * `npm run explore -- --scenario FILE`: a team's scenario, from the command line, through the same
 * API its tests call. FILE's default export is a scenario or a list of them.
 */
export async function exploreScenarioFile(
  file: string,
  options: {
    readonly depth: 1 | 2;
    readonly concurrency: number;
    readonly cell?: string;
    readonly json: boolean;
  },
): Promise<Finished> {
  const path = resolve(file);
  if (!existsSync(path)) throw new UsageError(`--scenario ${file}: no such file`);
  const module = (await import(pathToFileURL(path).href)) as { default?: Scenario | readonly Scenario[] };
  const scenarios = [module.default ?? []].flat() as Scenario[];
  if (options.cell !== undefined && scenarios.length > 1) {
    throw new UsageError(
      `--cell with --scenario ${file}: it exports ${scenarios.length} scenarios; a cell's plan names steps of one (export that one alone to replay it)`,
    );
  }
  if (
    scenarios.length === 0 ||
    scenarios.some((each) => typeof each?.name !== 'string' || typeof each.handler !== 'function')
  ) {
    throw new UsageError(
      `--scenario ${file}: its default export must be a scenario ({ name, handler, events, invariant, … }) or a list of them (docs/explore.md#explore-your-own-consumer)`,
    );
  }
  const say = (message: string) => process.stderr.write(`• ${message}\n`);
  say(`starting fauxqs and DynamoDB Local for ${scenarios.map((each) => each.name).join(', ')}`);
  const explorer = await startExplorer();
  const explorations: Exploration[] = [];
  try {
    for (const scenario of scenarios) {
      say(`${scenario.name}: a clean run records the trace, then one cell per step and fault`);
      explorations.push(
        await explorer
          .explore(scenario, {
            depth: options.depth,
            concurrency: options.concurrency,
            ...(options.cell ? { only: [options.cell] } : {}),
            onCell: (done, total) => {
              if (done === total) say(`${scenario.name}: ${done}/${total} cells`);
            },
          })
          // A plan or a scenario it cannot run is the command line's mistake: exit 2, in one line.
          .catch((error: unknown) => {
            throw error instanceof PlanError || error instanceof ScenarioError
              ? new UsageError(error.message)
              : error;
          }),
      );
    }
  } finally {
    await explorer.stop();
  }
  const replay = (_: Exploration, cell: ExploredCell) =>
    `npm run explore -- --scenario ${file} --cell ${cell.plan}`;
  const written = await writeReport(explorations, join(PROJECT_ROOT, 'reports'), { replay });
  const broken = explorations.some((each) => !each.clean.held || each.cells.some((cell) => !cell.held));
  if (options.json) {
    await new Promise<void>((done) =>
      process.stdout.write(`${JSON.stringify({ explorations })}\n`, () => done()),
    );
  } else {
    for (const exploration of explorations)
      process.stdout.write(`${formatExploration(exploration, replay)}\n\n`);
    say(`written: ${relative(process.cwd(), written.json)}`);
  }
  return { exitCode: broken ? 1 : 0, report: written.json, page: written.page };
}

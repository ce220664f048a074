/** docs/testing.md's times: what CI and `npm test` took, from a summary written after a fresh clone's `.ci/run`. */
import { markdownTable } from './markdown.js';

export interface TestingTimes {
  /** `.ci/run` in a fresh clone, in all (installs, `npm test`, `test:node24`). */
  readonly ciSeconds: number;
  readonly npmCiSeconds: number;
  /** Vitest's own duration inside `npm test`, and its two phases' wall time. */
  readonly vitestSeconds: number;
  readonly cheapPhaseSeconds: number;
  readonly runsPhaseSeconds: number;
  readonly node24Seconds: number;
  readonly passed: number;
  readonly skipped: number;
}

export function testingTimesTable(times: TestingTimes): string {
  return markdownTable(
    ['what', 'time'],
    [
      ["a fresh clone's `.ci/run`, in all (installs, `npm test`, `test:node24`)", `**${times.ciSeconds} s**`],
      ['of which `npm ci`', `${times.npmCiSeconds} s`],
      [
        "of which `npm test`'s Vitest",
        `${times.vitestSeconds} s (${times.passed.toLocaleString('en-US')} passed, ${times.skipped} skipped): the cheap projects ${times.cheapPhaseSeconds} s, the whole runs ${times.runsPhaseSeconds} s`,
      ],
      ['of which `test:node24`', `${times.node24Seconds} s`],
    ],
  );
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODE_NAMES, MODES, type Mode, type ProofCount } from '../../contract/topology.js';
import {
  type RunningExploreEnvironment,
  startExploreEnvironment,
} from '../../harness/explore/environment.js';
import { exploreMode } from '../../harness/explore/explore.js';
import { planText } from '../../harness/explore/report.js';

/**
 * The component layer: every mode's core, in this process, against DynamoDB Local (real
 * conditions, real transactions) and fauxqs, with no child process but DynamoDB Local's and the
 * payment provider's. One event, every cell of its depth-1 exploration (each step × each fault,
 * the redelivery at receiveCount + 1, the verifier's own join): the mode's promise in every cell,
 * and at its crash point (the topology's `crashStep`: killed just before that step) the counts
 * of its proof. Generated from contract/topology.ts, so a new mode brings its own cases.
 */
/**
 * Each core's steps for one event, as other systems see them: a request the explorer did not see
 * (the team's work inside Powertools, a charge attempt, at-most-once's delete) would be a cell
 * never explored. Typed per mode: a new mode states its trace here.
 */
const TRACES: { readonly [M in Mode]: readonly string[] } = {
  'at-most-once': ['DeleteMessageBatch', 'UpdateItem', 'acknowledge'],
  'at-least-once': ['UpdateItem', 'acknowledge'],
  'effectively-once': ['TransactWriteItems', 'acknowledge'],
  'powertools-idempotency': ['PutItem', 'TransactWriteItems', 'UpdateItem', 'acknowledge'],
  'powertools-message-id': ['PutItem', 'TransactWriteItems', 'UpdateItem', 'acknowledge'],
  'entry-upsert': ['UpdateItem', 'acknowledge'],
  'state-upsert': ['UpdateItem', 'acknowledge'],
  'fifo-versioned': ['UpdateItem', 'acknowledge'],
  'charge-no-key': ['Charge', 'TransactWriteItems', 'acknowledge'],
  'charge-with-key': ['Charge', 'TransactWriteItems', 'acknowledge'],
  'marker-then-credit': ['PutItem', 'UpdateItem', 'acknowledge'],
  'credit-then-marker': ['GetItem', 'UpdateItem', 'PutItem', 'acknowledge'],
};

let env: RunningExploreEnvironment;
beforeAll(async () => {
  env = await startExploreEnvironment(MODE_NAMES);
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

describe.each(MODE_NAMES)('the %s core, one event, every step and fault', (mode) => {
  it(`keeps its promise in every cell, and shows its proof when killed before its ${MODES[mode].crashStep}`, async () => {
    const exploration = await exploreMode(env, mode, {
      scenario: { events: 1, accounts: 1 },
      depth: 1,
      concurrency: 8,
    });

    expect(exploration.steps.map((step) => step.operation)).toEqual(TRACES[mode]);
    const broken = exploration.cells.filter((cell) => !cell.promiseHeld).map((cell) => planText(cell.plan));
    expect(broken).toEqual([]);
    const step = exploration.steps.find(
      (each) => each.operation === MODES[mode].crashStep && each.attempt === 1 && each.occurrence === 1,
    );
    expect(step, `${mode}'s trace has its crash step`).toBeDefined();
    const designed = exploration.cells.find(
      (cell) => cell.plan[0]?.step === step?.key && cell.plan[0]?.fault === 'killed-before',
    );
    // The explorer kills without the lab's crash injector: no crash is counted.
    const { crashes: _, ...counts } = MODES[mode].proof.counts;
    const shown = Object.fromEntries(
      Object.keys(counts).map((count) => [count, designed?.outcome[count as Exclude<ProofCount, 'crashes'>]]),
    );
    expect(shown).toEqual(counts);
  }, 120_000);
});

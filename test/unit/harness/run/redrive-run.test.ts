import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { RunNotFoundError } from '../../../../contract/errors.js';
import { MODE_NAMES, type Mode } from '../../../../contract/topology.js';
import type {
  EffectiveModeSettings,
  ExperimentEnvironment,
} from '../../../../harness/environments/environment.js';
import { formatRedriveRun } from '../../../../harness/report/redrive-tables.js';
import { redriveFinishedRun } from '../../../../harness/run/redrive-run.js';
import type { ModeOutcome } from '../../../../verifier/outcome.js';
import type { VerifierResult } from '../../../../verifier/verifier.js';
import { modeOutcome } from '../../../support/outcome.js';

const ddb = mockClient(DynamoDBDocumentClient);

/** One mode's outcome: 10 events, as the verifier reports them; each test sets what it is about. */
function outcome(overrides: Partial<ModeOutcome>): ModeOutcome {
  return modeOutcome({ deliveries: 12, ...overrides });
}

const SETTINGS: EffectiveModeSettings = {
  batchSize: 10,
  maxBatchingWindowSeconds: 0,
  maxConcurrency: 5,
  visibilityTimeoutSeconds: 1,
  functionTimeoutSeconds: 1,
  maxReceiveCount: 10,
};

/**
 * A deployed stack after a run, as the ExperimentEnvironment interface shows it: DLQs holding what
 * the run left there, a redrive that moves them to the source queue, consumers that empty it by the
 * next poll, and a verifier that answers `before` until the redrive, `after` from then on.
 */
function fakeStack(state: {
  readonly dlq: Partial<Record<Mode, number>>;
  readonly before: Partial<Record<Mode, ModeOutcome>>;
  readonly after: Partial<Record<Mode, ModeOutcome>>;
}) {
  const dlq = { ...state.dlq };
  const queue: Partial<Record<Mode, number>> = {};
  const calls: string[] = [];
  let redriven = false;
  const env: ExperimentEnvironment = {
    description: {
      target: 'aws',
      crashRate: 0,
      crashSeed: 'deployed',
      modes: Object.fromEntries(MODE_NAMES.map((mode) => [mode, SETTINGS])) as Record<
        Mode,
        EffectiveModeSettings
      >,
    },
    modes: MODE_NAMES,
    sqs: new SQSClient({ region: 'eu-west-1' }),
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
    tableName: 'ledger-stack',
    drainPolicy: { pollMs: 1, stablePolls: 2 },
    queueUrl: (mode) => `https://sqs.local/${mode}`,
    queueDepth: async (mode) => {
      // The consumers take what the redrive sent back: seen once, then gone.
      const visible = queue[mode] ?? 0;
      queue[mode] = 0;
      return { visible, inFlight: 0 };
    },
    deadLetterQueueDepth: async (mode) => ({ visible: dlq[mode] ?? 0, inFlight: 0 }),
    redrive: async (mode) => {
      calls.push(`redrive ${mode}`);
      redriven = true;
      const moved = dlq[mode] ?? 0;
      dlq[mode] = 0;
      queue[mode] = moved;
      return moved;
    },
    invokeVerifier: async (runId, modes) => {
      calls.push(`verify ${runId} ${modes.join(',')}`);
      const outcomes = redriven ? state.after : state.before;
      const result: VerifierResult = {
        runId,
        modes: Object.fromEntries(modes.map((mode) => [mode, outcomes[mode]])),
      };
      return { result };
    },
    stop: async () => undefined,
  };
  return { env, calls };
}

const phases: string[] = [];
const progress = { phase: (message: string) => phases.push(message) };

/** The run's manifest summary, as the producer wrote it to the ledger. */
function manifest(modes: readonly Mode[] | undefined) {
  ddb.on(QueryCommand).resolves({
    Items: modes
      ? [{ produced: 10, poison: 0, producerDuplicates: 0, expectedCents: 1_000, modes: [...modes] }]
      : [],
  });
}

describe('npm run redrive: the redrive of a finished run', () => {
  beforeEach(() => {
    ddb.reset();
    phases.length = 0;
  });

  const before = {
    'at-least-once': outcome({
      appliedOnce: 7,
      deadLettered: 3,
      deadLetteredCents: 300,
      actualCents: 700,
      ledgerCents: 700,
      driftCents: -300,
    }),
    'effectively-once': outcome({
      appliedOnce: 9,
      deadLettered: 1,
      appliedAndDeadLettered: 1,
      deadLetteredCents: 100,
      actualCents: 900,
      ledgerCents: 900,
      driftCents: -100,
    }),
    'at-most-once': outcome({
      appliedOnce: 9,
      lost: 1,
      actualCents: 900,
      ledgerCents: 900,
      driftCents: -100,
    }),
  };
  const after = {
    'at-least-once': outcome({ appliedOnce: 10, deliveries: 15 }),
    'effectively-once': outcome({ appliedOnce: 10, deliveries: 14, suppressedDuplicates: 1 }),
    'at-most-once': before['at-most-once'],
  };

  it('verifies the run’s modes, redrives each non-empty DLQ, drains and verifies again', async () => {
    manifest(['at-most-once', 'at-least-once', 'effectively-once']);
    const { env, calls } = fakeStack({
      dlq: { 'at-least-once': 3, 'effectively-once': 2 },
      before,
      after,
    });

    const report = await redriveFinishedRun(env, { runId: 'run-1' }, progress);

    const modes = 'at-most-once,at-least-once,effectively-once';
    expect(calls).toEqual([
      `verify run-1 ${modes}`,
      'redrive at-least-once',
      'redrive effectively-once',
      `verify run-1 ${modes}`,
    ]);
    expect(report).toMatchObject({
      runId: 'run-1',
      target: 'aws',
      modes: {
        'at-most-once': { ...after['at-most-once'], redrive: { redriven: 0, lost: 1 } },
        // The state after the redrive first; the run as it stood before it under redrive.firstDrain.
        'at-least-once': {
          ...after['at-least-once'],
          redrive: {
            deadLetteredBefore: 3,
            redriven: 3,
            appliedAfterRedrive: 3,
            duplicatedByRedrive: 0,
            deadLetteredAgain: 0,
            lost: 0,
            firstDrain: before['at-least-once'],
          },
        },
        'effectively-once': { redrive: { redriven: 2, appliedAfterRedrive: 1, duplicatedByRedrive: 0 } },
      },
    });
    expect(phases).toContain(
      'redriving 5 messages from 2 DLQs (at-most-once 0, at-least-once 3, effectively-once 2)',
    );
    // The report is JSON as written: the verifier's per-event detail is never in it.
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);

    const printed = formatRedriveRun(report, 'DeliverySemantics');
    expect(printed).toMatch(/^redrive of run run-1 on aws \(stack DeliverySemantics\): 3 modes, /);
    expect(printed).toContain('after the redrive (the final state):\nmode ');
    expect(printed).toMatch(/\nthe redrive \(of the finished run; move \d+\.\d s, drain/);
    expect(printed).toContain('the first drain, before the redrive:\nmode ');
    expect(printed.indexOf('the final state')).toBeLessThan(printed.indexOf('the first drain, before'));
    // Dead-lettered before 1, redriven 2, applied after the redrive 1, duplicated by it 0, …, drift 0.
    expect(printed).toMatch(/\neffectively-once +1 +2 +1 +0 [ 0]+0\.00 +yes$/m);
  });

  it('redrives only the modes asked for', async () => {
    manifest(['at-most-once', 'at-least-once', 'effectively-once']);
    const { env, calls } = fakeStack({ dlq: { 'at-least-once': 3, 'effectively-once': 2 }, before, after });

    const report = await redriveFinishedRun(env, { runId: 'run-1', modes: ['effectively-once'] }, progress);

    expect(calls).toEqual([
      'verify run-1 effectively-once',
      'redrive effectively-once',
      'verify run-1 effectively-once',
    ]);
    expect(Object.keys(report.modes)).toEqual(['effectively-once']);
  });

  it('moves nothing for a run the ledger does not know, or a mode the run was not produced to', async () => {
    const { env, calls } = fakeStack({ dlq: { 'at-least-once': 3 }, before, after });

    manifest(undefined);
    await expect(redriveFinishedRun(env, { runId: 'nope' }, progress)).rejects.toThrow(
      new RunNotFoundError(
        'no run nope in the ledger ledger-stack (aws): was it run against this stack, and is it still in the ledger?',
      ),
    );
    manifest(['at-least-once']);
    await expect(
      redriveFinishedRun(
        env,
        { runId: 'run-1', modes: ['at-least-once', 'powertools-message-id'] },
        progress,
      ),
    ).rejects.toThrow('run run-1 was not produced to powertools-message-id (produced to: at-least-once)');
    expect(calls).toEqual([]);
  });
});

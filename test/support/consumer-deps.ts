import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DEFAULT_RETENTION, type Retention } from '../../contract/retention.js';
import type { Mode } from '../../contract/topology.js';
import { buildConsumerDeps, type ConsumerDeps, harnessConfig } from '../../modes/kit/consumer.js';

/** Thrown by the injected kill: stands in for SIGKILL, which would end the test runner. */
export class Killed extends Error {
  override readonly name = 'Killed';
}

export const NOW = Date.UTC(2026, 0, 1);

/** The idempotency table of the modes that keep Powertools' records apart (vitest.config.ts sets the same). */
export const IDEMPOTENCY_TABLE = 'idempotency-test';

/** Consumer deps with real SDK clients (mocked by aws-sdk-client-mock at prototype level) and an injected kill. */
export function consumerDeps(
  mode: Mode,
  options: {
    crashRate?: number;
    crashSeed?: string;
    /** Runs when the injected kill fires, before it throws: a test can snapshot what was written by then. */
    onKill?: () => void;
    retention?: Retention;
    ageGuard?: boolean;
  } = {},
): ConsumerDeps & {
  kills: number;
  /** The handler's promise, or a Killed rejection once the injected kill fires (the handler never settles then). */
  untilKilled<T>(handling: Promise<T>): Promise<T>;
} {
  const config = harnessConfig(mode, 'ledger-test', {
    crashRate: options.crashRate ?? 0,
    crashSeed: options.crashSeed ?? 'unit',
    retention: options.retention ?? DEFAULT_RETENTION,
    ageGuard: options.ageGuard ?? true,
  });
  const state = { kills: 0 };
  let killed: (error: Killed) => void = () => undefined;
  const killedPromise = new Promise<never>((_, reject) => {
    killed = reject;
  });
  // A kill that settles nothing: what came after it in the handler never runs, as after SIGKILL.
  const kill = (): Promise<never> => {
    state.kills += 1;
    options.onKill?.();
    killed(new Killed('SIGKILL (injected)'));
    return new Promise<never>(() => undefined);
  };
  return Object.assign(state, {
    untilKilled: <T>(handling: Promise<T>): Promise<T> => Promise.race([handling, killedPromise]),
    ...buildConsumerDeps(config, {
      kill,
      ledger: { now: () => NOW, retry: { attempts: 3, baseDelayMs: 0 } },
    }),
  });
}
/**
 * A ConditionalCheckFailed carrying the stored item's version, as DynamoDB returns it with
 * ReturnValuesOnConditionCheckFailure ALL_OLD (marshalled): the versioned consumers read it to tell
 * a repeat from a gap or a superseded state without a read.
 */
export const conditionFailedAtVersion = (version: number) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: { version: { N: String(version) } },
  });

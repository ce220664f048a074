import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createLogger } from '../../contract/logger.js';
import { DEFAULT_RETENTION, type Retention } from '../../contract/retention.js';
import type { Mode } from '../../contract/topology.js';
import { type ConsumerDeps, createCrashWithRecord } from '../../modes/kit/consumer.js';
import type { Ledger } from '../../modes/kit/ledger.js';

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
  const config = {
    mode,
    tableName: 'ledger-test',
    crashRate: options.crashRate ?? 0,
    crashSeed: options.crashSeed ?? 'unit',
    crashAt: new Set<string>(),
    retention: options.retention ?? DEFAULT_RETENTION,
    ageGuard: options.ageGuard ?? true,
  };
  const ledger: Ledger = {
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})),
    tableName: config.tableName,
    mode,
    retention: config.retention,
    now: () => NOW,
    retry: { attempts: 3, baseDelayMs: 0 },
  };
  const logger = createLogger(mode);
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
    config,
    ledger,
    sqs: new SQSClient({}),
    logger,
    crash: createCrashWithRecord(config, ledger, logger, kill),
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

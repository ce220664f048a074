import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type ConsumerDeps, createCrashWithRecord, createLogger } from '../../functions/shared/consumer.js';
import type { Ledger } from '../../functions/shared/ledger.js';
import type { Mode } from '../../lib/topology.js';

/** Thrown by the injected kill: stands in for SIGKILL, which would end the test runner. */
export class Killed extends Error {
  override readonly name = 'Killed';
}

export const NOW = Date.UTC(2026, 0, 1);

/** Consumer deps with real SDK clients (mocked by aws-sdk-client-mock at prototype level) and an injected kill. */
export function consumerDeps(
  mode: Mode,
  options: { crashRate?: number; crashSeed?: string } = {},
): ConsumerDeps & {
  kills: number;
} {
  const config = {
    mode,
    tableName: 'ledger-test',
    crashRate: options.crashRate ?? 0,
    crashSeed: options.crashSeed ?? 'unit',
  };
  const ledger: Ledger = {
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})),
    tableName: config.tableName,
    mode,
    now: () => NOW,
    retry: { attempts: 3, baseDelayMs: 0 },
  };
  const logger = createLogger(mode);
  const state = { kills: 0 };
  const kill = (): never => {
    state.kills += 1;
    throw new Killed('SIGKILL (injected)');
  };
  return Object.assign(state, {
    config,
    ledger,
    sqs: new SQSClient({}),
    logger,
    crash: createCrashWithRecord(config, ledger, logger, kill),
  });
}

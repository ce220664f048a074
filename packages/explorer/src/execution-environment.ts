import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { interceptClient, interceptFetch } from './invocation.js';
import type { CellContext, HandlerClients, Scenario, SqsHandler } from './scenario.js';

/** Where the cells run: the emulators' endpoints, and one client each for the explorer's own calls. */
export interface CellEnvironment {
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string };
  readonly dynamodb: DynamoDBClient;
  readonly ddb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
}

export interface ExecutionEnvironment {
  readonly handler: SqsHandler;
  destroy(): void;
}

/**
 * One execution environment: the team's factory over fresh clients whose every attempt, inside an
 * invocation, is a step. A factory that throws gives a handler that throws the same: an init
 * error fails each invocation, as Lambda's does.
 */
export async function executionEnvironment(
  env: CellEnvironment,
  scenario: Scenario,
  cell: CellContext,
): Promise<ExecutionEnvironment> {
  const config = { region: env.region, credentials: env.credentials };
  const dynamodb = interceptClient(
    new DynamoDBClient({ ...config, endpoint: env.endpoints.dynamodb }),
    'dynamodb',
  );
  const sqs = interceptClient(new SQSClient({ ...config, endpoint: env.endpoints.sqs }), 'sqs');
  const made: { destroy(): void }[] = [dynamodb, sqs];
  const clients: HandlerClients = {
    ...cell,
    dynamodb,
    ddb: DynamoDBDocumentClient.from(dynamodb),
    sqs,
    fetch: interceptFetch(),
    intercept: (client, service, isStep) => {
      made.push(client as unknown as { destroy(): void });
      return interceptClient(client, service, isStep);
    },
  };
  const destroy = () => {
    for (const client of made) (client as { destroy?: () => void }).destroy?.();
  };
  try {
    const built = await withInitTimeout(scenario.handler(clients));
    if (typeof built === 'function') return { handler: built, destroy };
    if (typeof built?.handler === 'function') {
      return {
        handler: built.handler,
        destroy: () => {
          built.destroy?.();
          destroy();
        },
      };
    }
    const error = new TypeError(
      `the handler factory returned ${preview(built)}: give a function (event, context) => response, or { handler, destroy }`,
    );
    return { handler: () => Promise.reject(error), destroy };
  } catch (error) {
    return { handler: () => Promise.reject(error), destroy };
  }
}

/** Lambda's limit on an execution environment's init: a factory that takes longer fails each invocation. */
const INIT_TIMEOUT_MS = 10_000;

async function withInitTimeout<T>(built: T | Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the handler factory did not resolve within ${INIT_TIMEOUT_MS / 1000} s (Lambda's init limit)`,
          ),
        ),
      INIT_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([built, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The Lambda context an invocation gets: its remaining time counts down to the deadline. */
export function lambdaContext(
  name: string,
  deadline: number,
  timeoutMs: number,
  region = 'us-east-1',
  /** The invocation's clock (an interleaving's scheduler's), else the wall clock. */
  clock: () => number = Date.now,
): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${name}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: `explorer/${timeoutMs}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - clock()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return preview(error);
}

export function preview(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

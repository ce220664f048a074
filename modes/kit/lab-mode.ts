import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readConsumerConfig } from '../../contract/config.js';
import type { Mode } from '../../contract/topology.js';
import type { ChargeDeps } from '../../services/payment-provider/client.js';
import { buildConsumerDeps, type ConsumerDeps } from './consumer.js';
import type { Idempotency } from './idempotency.js';

/** What a mode that deletes or releases records itself needs: the queue its mapping reads. */
export interface QueueNeeds {
  readonly queueUrl: string;
}

/**
 * at-most-once's needs: its queue, and the client its work writes with, which must not retry: an
 * UpdateItem ADD whose answer was lost is applied again by the SDK's retry (the explorer shows it).
 */
export interface AtMostOnceNeeds extends QueueNeeds {
  readonly workDdb: import('@aws-sdk/lib-dynamodb').DynamoDBDocumentClient;
}

/** A charge mode's payment client and its lost-response fault. */
export interface ChargeNeeds {
  readonly charge: ChargeDeps;
}

/** A Powertools mode's idempotency utility, and its BatchProcessor (stateful per invocation). */
export interface PowertoolsNeeds {
  readonly idempotency: Idempotency;
  readonly processor: import('@aws-lambda-powertools/batch').BatchProcessor;
}

/**
 * What each mode's processBatch needs beyond the common deps. Every mode of the topology must be
 * here ({@link LAB_MODE_NEEDS_ARE_COMPLETE}), so a new mode states its needs or does not compile,
 * and whoever builds its deps (the Lambda entry, the floor bench, a test) must give them.
 */
export interface ModeNeeds {
  'at-most-once': AtMostOnceNeeds;
  'at-least-once': object;
  'effectively-once': object;
  'powertools-idempotency': PowertoolsNeeds;
  'powertools-message-id': PowertoolsNeeds;
  'entry-upsert': object;
  'state-upsert': object;
  'fifo-versioned': QueueNeeds;
  'charge-no-key': ChargeNeeds;
  'charge-with-key': ChargeNeeds;
  'marker-then-credit': object;
  'credit-then-marker': object;
}

/** Fails to compile if a topology mode has no needs above, or the needs name a mode it lacks. */
export const LAB_MODE_NEEDS_ARE_COMPLETE: [Mode] extends [keyof ModeNeeds]
  ? [keyof ModeNeeds] extends [Mode]
    ? true
    : never
  : never = true;

export type ModeDeps<M extends Mode> = ConsumerDeps & ModeNeeds[M];

export type BatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** One mode of the lab: a core and its wrapping, in one shape for every mode. */
export interface LabMode<M extends Mode> {
  readonly mode: M;
  /** Its needs, read from the environment: the Lambda entry's only. */
  readonly needsFromEnvironment: (deps: ConsumerDeps) => ModeNeeds[M];
  /** One invocation, with deps the caller built (the Lambda entry, the floor bench, a unit test). */
  readonly processBatch: (event: SQSEvent, context: Context, deps: ModeDeps<M>) => Promise<SQSBatchResponse>;
}

/**
 * A mode's definition, with its Lambda handler. The deps are built from the environment at import,
 * once per execution environment, in Lambda's init phase. If that fails (a setting missing), the
 * import still succeeds and every invocation fails with the reason: so the floor bench and the
 * tests can import any mode without its environment and give it deps of their own.
 */
export function labMode<M extends Mode>(
  definition: LabMode<M>,
): LabMode<M> & { readonly handler: BatchHandler } {
  let deps: ModeDeps<M> | Error;
  try {
    const common = buildConsumerDeps(readConsumerConfig(definition.mode));
    deps = { ...common, ...definition.needsFromEnvironment(common) };
  } catch (error) {
    deps = error instanceof Error ? error : new Error(String(error));
  }
  return {
    ...definition,
    handler: async (event, context) => {
      if (deps instanceof Error) throw deps;
      deps.logger.addContext(context);
      return definition.processBatch(event, context, deps);
    },
  };
}

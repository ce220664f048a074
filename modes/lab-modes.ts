import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Mode } from '../contract/topology.js';
import type { PaymentClient } from '../services/payment-provider/client.js';
import type { PowertoolsMode } from './families/powertools.js';
import type { ConsumerDeps } from './kit/consumer.js';
import type { BatchHandler, ChargeNeeds, LabMode, ModeNeeds, PowertoolsNeeds } from './kit/lab-mode.js';

/** What a harness that runs a mode's processBatch in its own process (the floor bench, the explorer) gives. */
export interface NeedsInputs {
  /** The queue a mode that deletes or releases its own records reads. */
  readonly queueUrl: string;
  readonly idempotencyTableName: string;
  /** Powertools' own client. */
  readonly idempotencyClient: DynamoDBClient;
  /** at-most-once's work client: one attempt per write, as its Lambda entry makes it. */
  readonly workDdb: DynamoDBDocumentClient;
  /** The charge modes' client; absent where no payment provider runs. */
  readonly payments?: PaymentClient;
}

/** One mode in the registry: how its definition is loaded, and how a harness feeds its needs. */
export interface LabModeEntry<M extends Mode> {
  /** Its definition (modes/kit/lab-mode.ts), loaded on demand: a tool pays only for the modes it runs. */
  readonly load: () => Promise<LabMode<M>>;
  /**
   * Its needs beyond the common deps, as a harness gives them in its own process: set up once per
   * execution environment, then made per invocation (a Powertools BatchProcessor is stateful per
   * invocation). The Lambda entry reads them from its environment instead (`needsFromEnvironment`).
   */
  readonly needs: (inputs: NeedsInputs) => Promise<() => ModeNeeds[M]>;
}

const none = async (): Promise<() => object> => () => ({});

/**
 * Every mode of the lab, by name. Typed per mode: a topology mode missing here, a loader whose
 * definition is another mode's, or needs that are not the mode's do not compile. The Lambda entry of
 * a mode is the file its loader imports, `modes/<mode>.ts` (stack/bundling.ts's handlerEntry); a
 * unit test checks that each entry's handler is its definition's.
 */
export const LAB_MODES: { readonly [M in Mode]: LabModeEntry<M> } = {
  'at-most-once': {
    load: async () => (await import('./at-most-once.js')).consumer,
    needs:
      async ({ queueUrl, workDdb }) =>
      () => ({ queueUrl, workDdb }),
  },
  'at-least-once': { load: async () => (await import('./at-least-once.js')).consumer, needs: none },
  'effectively-once': { load: async () => (await import('./effectively-once.js')).consumer, needs: none },
  'powertools-idempotency': {
    load: async () => (await import('./powertools-idempotency.js')).consumer,
    needs: async (inputs) => powertoolsNeeds(inputs, (await import('./powertools-idempotency.js')).consumer),
  },
  'powertools-message-id': {
    load: async () => (await import('./powertools-message-id.js')).consumer,
    needs: async (inputs) => powertoolsNeeds(inputs, (await import('./powertools-message-id.js')).consumer),
  },
  'entry-upsert': { load: async () => (await import('./entry-upsert.js')).consumer, needs: none },
  'state-upsert': { load: async () => (await import('./state-upsert.js')).consumer, needs: none },
  'fifo-versioned': {
    load: async () => (await import('./fifo-versioned.js')).consumer,
    needs:
      async ({ queueUrl }) =>
      () => ({ queueUrl }),
  },
  'charge-no-key': { load: async () => (await import('./charge-no-key.js')).consumer, needs: chargeNeeds },
  'charge-with-key': {
    load: async () => (await import('./charge-with-key.js')).consumer,
    needs: chargeNeeds,
  },
  'marker-then-credit': { load: async () => (await import('./marker-then-credit.js')).consumer, needs: none },
  'credit-then-marker': { load: async () => (await import('./credit-then-marker.js')).consumer, needs: none },
};

/**
 * A mode's processBatch in the caller's own process, with the common deps it built
 * (kit/consumer.ts's buildConsumerDeps) and its needs fed from `inputs`: the floor bench's and the
 * explorer's way to run a mode, as its Lambda entry runs it.
 */
export async function inProcessHandler<M extends Mode>(
  mode: M,
  deps: ConsumerDeps,
  inputs: NeedsInputs,
): Promise<BatchHandler> {
  // One entry of the mapped registry, typed for this M (TypeScript does not narrow a mapped type by a generic key).
  const entry = LAB_MODES[mode] as LabModeEntry<M>;
  const definition = await entry.load();
  const needs = await entry.needs(inputs);
  return (event, context) => definition.processBatch(event, context, { ...deps, ...needs() });
}

async function powertoolsNeeds(
  inputs: NeedsInputs,
  mode: Pick<PowertoolsMode<'powertools-idempotency' | 'powertools-message-id'>, 'createIdempotency'>,
): Promise<() => PowertoolsNeeds> {
  const { BatchProcessor, EventType } = await import('@aws-lambda-powertools/batch');
  const idempotency = mode.createIdempotency(inputs.idempotencyTableName, inputs.idempotencyClient);
  return () => ({ idempotency, processor: new BatchProcessor(EventType.SQS) });
}

async function chargeNeeds({ payments }: NeedsInputs): Promise<() => ChargeNeeds> {
  if (payments === undefined) {
    throw new Error('a charge mode needs the payment provider: start the environment with that mode');
  }
  return () => ({ charge: { payments, lostResponseRate: 0 } });
}

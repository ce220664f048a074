import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Mode } from '../contract/topology.js';
import type { PaymentClient } from '../services/payment-provider/client.js';
import type { PowertoolsMode } from './families/powertools.js';
import type { ChargeNeeds, ModeNeeds, PowertoolsNeeds } from './kit/lab-mode.js';

/** What a harness that runs processBatch in its own process (the floor bench, the explorer) gives. */
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

/**
 * Per mode, what its processBatch needs beyond the common deps, as the harness gives it in its own
 * process: set up once per execution environment, then made per invocation (a Powertools
 * BatchProcessor is stateful per invocation). Typed per mode (modes/kit/lab-mode.ts): a new
 * mode states here how it is fed.
 */
export const MODE_NEEDS: { readonly [M in Mode]: (inputs: NeedsInputs) => Promise<() => ModeNeeds[M]> } = {
  'at-most-once':
    async ({ queueUrl, workDdb }) =>
    () => ({ queueUrl, workDdb }),
  'at-least-once': async () => () => ({}),
  'effectively-once': async () => () => ({}),
  'powertools-idempotency': async (inputs) =>
    powertoolsNeeds(inputs, (await import('./powertools-idempotency.js')).consumer),
  'powertools-message-id': async (inputs) =>
    powertoolsNeeds(inputs, (await import('./powertools-message-id.js')).consumer),
  'entry-upsert': async () => () => ({}),
  'state-upsert': async () => () => ({}),
  'fifo-versioned':
    async ({ queueUrl }) =>
    () => ({ queueUrl }),
  'charge-no-key': chargeNeeds,
  'charge-with-key': chargeNeeds,
  'marker-then-credit': async () => () => ({}),
  'credit-then-marker': async () => () => ({}),
};

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

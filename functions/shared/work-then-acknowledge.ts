import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Delivery } from '../../contract/ledger-keys.js';
import type { Mode } from '../../contract/topology.js';
import { processInOrder } from '../core/batch.js';
import { readConsumerConfig } from './config.js';
import { type ConsumerDeps, countDeliveries, createConsumerDeps, deliveryOf } from './consumer.js';
import type { CreditOutcome } from './ledger.js';
import { type MessageBody, parseMessageBody, receiveCountOf } from './message.js';

export type ApplyMessage = (
  deps: ConsumerDeps,
  message: MessageBody,
  delivery: Delivery,
) => Promise<CreditOutcome>;

/**
 * The modes that work first and let Lambda acknowledge afterwards, as the lab runs them: the core's
 * loop (functions/core/batch.ts: in order, partial batch response, the FIFO group rule), with the
 * lab around it: deliveries counted before any work, and the crash "after applying the message,
 * before the batch is acknowledged" drawn once each record's work has returned. `apply` decides
 * whether a redelivery duplicates.
 *
 * The FIFO group rule ends a failed record's group, not the batch: AWS's simplest rule (stop at the
 * first failure, report everything after it) keeps order too, but behind a failure that never heals
 * (a gap behind a dead-lettered event) other accounts would use up their receives and be
 * dead-lettered for nothing (docs/ordering.md, "The gap policy").
 */
export async function workThenAcknowledge(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
  apply: ApplyMessage,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  return processInOrder(
    event.Records,
    async (record) => {
      const message = parseMessageBody(record.body);
      await apply(deps, message, deliveryOf(record, context, event.Records.indexOf(record)));
      await deps.crash.maybeCrash({
        runId: message.runId,
        key: message.eventId,
        receiveCount: receiveCountOf(record),
        where: 'after applying the message, before the batch is acknowledged',
      });
    },
    deps.logger,
  );
}

/** A work-first mode's exports, the same for every such mode. */
export interface WorkFirstMode {
  /** One invocation with injected deps (the unit tests and the floor bench call it). */
  readonly processBatch: (
    event: SQSEvent,
    context: Pick<Context, 'awsRequestId'>,
    deps: ConsumerDeps,
  ) => Promise<SQSBatchResponse>;
  /** The Lambda handler, its deps built once per execution environment, at cold start. */
  readonly handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
}

/** A mode that works, then lets Lambda acknowledge: `apply` per record. Call it at a handler's module scope. */
export function workFirstMode(mode: Mode, apply: ApplyMessage): WorkFirstMode {
  const deps = createConsumerDeps(readConsumerConfig(mode));
  const processBatch: WorkFirstMode['processBatch'] = (event, context, batchDeps) =>
    workThenAcknowledge(event, context, batchDeps, apply);
  return {
    processBatch,
    handler: (event, context) => {
      deps.logger.addContext(context);
      return processBatch(event, context, deps);
    },
  };
}

import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Delivery } from '../../contract/ledger-keys.js';
import { isFifoMode, type Mode } from '../../contract/topology.js';
import { readConsumerConfig } from './config.js';
import {
  type ConsumerDeps,
  countDeliveries,
  createConsumerDeps,
  deliveryOf,
  logRecordFailure,
  REPORTED_AS_FAILED,
} from './consumer.js';
import type { CreditOutcome } from './ledger.js';
import { type MessageBody, parseMessageBody, receiveCountOf } from './message.js';

export type ApplyMessage = (
  deps: ConsumerDeps,
  message: MessageBody,
  delivery: Delivery,
) => Promise<CreditOutcome>;

/**
 * The loop shared by the modes that work first and let Lambda acknowledge (delete) afterwards:
 * every record is applied, then the handler returns, then Lambda deletes what was not reported
 * in `batchItemFailures`. A crash anywhere before the return deletes nothing, so every record of
 * the batch is delivered again — `apply` decides whether that duplicates.
 *
 * On a FIFO queue (`fifo`), a failure ends its message group's part of the batch: the failed
 * record and every later record of its group are reported, none of them applied, since applying
 * one would put it before the failed one, which comes back first. Other groups go on, as with
 * Powertools' SqsFifoPartialProcessor and `skipGroupOnError`. AWS's simplest rule, stop at the first
 * failure and report everything after it, keeps order too, but it makes other accounts' records
 * fail with it: behind a failure that never heals (a gap behind a dead-lettered event) they would
 * use up their receives and be dead-lettered for nothing (docs/ordering.md, "The gap policy").
 */
export async function workThenAcknowledge(
  event: SQSEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: ConsumerDeps,
  apply: ApplyMessage,
  fifo = false,
): Promise<SQSBatchResponse> {
  await countDeliveries(deps, event.Records);
  const failed: string[] = [];
  const failedGroups = new Set<string>();
  for (const [position, record] of event.Records.entries()) {
    // A FIFO record always has its group; without one, the whole batch is one group.
    const group = record.attributes.MessageGroupId ?? '';
    if (fifo && failedGroups.has(group)) {
      failed.push(record.messageId);
      continue;
    }
    const message = await applyRecord(deps, record, context, position, apply);
    if (message === undefined) {
      failed.push(record.messageId);
      if (fifo) failedGroups.add(group);
      continue;
    }
    await deps.crash.maybeCrash({
      runId: message.runId,
      key: message.eventId,
      receiveCount: receiveCountOf(record),
      where: 'after applying the message, before the batch is acknowledged',
    });
  }
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
}

/** Returns the message if it was applied (or recognised as already applied), undefined if it failed. */
async function applyRecord(
  deps: ConsumerDeps,
  record: SQSRecord,
  context: Pick<Context, 'awsRequestId'>,
  position: number,
  apply: ApplyMessage,
): Promise<MessageBody | undefined> {
  try {
    const message = parseMessageBody(record.body);
    await apply(deps, message, deliveryOf(record, context, position));
    return message;
  } catch (error) {
    logRecordFailure(deps, record, error, REPORTED_AS_FAILED);
    return undefined;
  }
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
  const fifo = isFifoMode(mode);
  const processBatch: WorkFirstMode['processBatch'] = (event, context, batchDeps) =>
    workThenAcknowledge(event, context, batchDeps, apply, fifo);
  return {
    processBatch,
    handler: (event, context) => {
      deps.logger.addContext(context);
      return processBatch(event, context, deps);
    },
  };
}

/**
 * The explorer's vocabulary: a step is one thing the consumer does that another system sees (an
 * attempt of a request to DynamoDB, SQS or an HTTP service, or the acknowledgement), and a fault
 * is what happens to the process or the answer at that step. A cell is one scenario run with
 * exactly one fault at one step (depth 1); or a lost response and a fault on the client's retry of
 * it (a retry cell: the retry's attempt exists only after the first fault); or at depth 2 one
 * fault and a second in a later delivery.
 */

export type Service = 'dynamodb' | 'sqs' | 'http' | 'mapping';

/** One step of a delivery's trace, keyed so that the same scenario always gives the same keys. */
export interface Step {
  /** `<event>:<operation>:<occurrence>:<attempt>`: what the fault plan and `--cell` name. */
  readonly key: string;
  readonly service: Service;
  /** The event the request is about (`batch`: several; `-`: none it names). */
  readonly event: string;
  /** `TransactWriteItems`, `DeleteMessageBatch`, an HTTP call's name (`fetch`), `acknowledge`. */
  readonly operation: string;
  /** The how-manieth send of this operation for this event in the delivery, from 1. */
  readonly occurrence: number;
  /** The SDK's (or the payment client's) attempt of that send, from 1. */
  readonly attempt: number;
}

export const FAULTS = {
  'killed-before': 'the process dies just before the attempt leaves',
  'response-lost': 'applied, answered 500 (a timed-out connection); the client retries as deployed',
  'lost-then-killed': 'applied, and the process dies before it sees the answer',
  'lost-error-seen':
    "applied, answered 500, every later attempt of the send refused: the handler's error path",
  'ack-not-applied': "the mapping's delete never happens: the batch comes back with receiveCount + 1",
} as const;

export type Fault = keyof typeof FAULTS;

/** Short column titles for the matrix. */
export const FAULT_TITLES: Readonly<Record<Fault, string>> = {
  'killed-before': 'killed before',
  'response-lost': 'response lost',
  'lost-then-killed': 'lost, killed',
  'lost-error-seen': 'lost, error seen',
  'ack-not-applied': 'ack not applied',
};

export const FAULT_NAMES = Object.keys(FAULTS) as Fault[];

/** The faults a step can take: an acknowledgement is killed before or not applied; a request, the rest. */
export function faultsAt(step: Pick<Step, 'service'>): readonly Fault[] {
  return step.service === 'mapping'
    ? ['killed-before', 'ack-not-applied']
    : ['killed-before', 'response-lost', 'lost-then-killed', 'lost-error-seen'];
}

/**
 * The faults a retry's attempt takes in a retry cell, after the attempt before it had its response
 * lost: lost again, lost and then killed, lost with the error seen. (Killed before the retry
 * leaves is the cell "lost, killed" of the attempt before: counted once.)
 */
export const RETRY_FAULTS: readonly Fault[] = ['response-lost', 'lost-then-killed', 'lost-error-seen'];

/** Column titles for the retry cells: the first attempt's response lost, then this on the retry. */
export const RETRY_TITLES: Readonly<Partial<Record<Fault, string>>> = {
  'response-lost': 'lost twice',
  'lost-then-killed': 'lost, retry lost, killed',
  'lost-error-seen': 'lost, retry lost, error seen',
};

/** single: one fault; retry: a lost response then a fault on the client's retry; pair: depth 2. */
export type CellKind = 'single' | 'retry' | 'pair';

/** A fault at a step of one delivery (1, 2, …: every invocation of the scenario in order). */
export interface PlannedFault {
  readonly delivery: number;
  readonly step: string;
  readonly fault: Fault;
}

/** A plan as `only` and `--cell` take it, and as it names a cell: `fault@delivery:step`, comma-separated. */
export function planText(plan: readonly PlannedFault[]): string {
  return plan.map((fault) => `${fault.fault}@${fault.delivery}:${fault.step}`).join(',');
}

/** `killed-before@1:evt-1:UpdateItem:1:1[,…]` as the faults it plans. */
export function parsePlan(text: string): PlannedFault[] {
  return text.split(',').map((part) => {
    const at = part.indexOf('@');
    const colon = part.indexOf(':', at);
    const fault = part.slice(0, at);
    const delivery = Number(part.slice(at + 1, colon));
    if (!FAULT_NAMES.includes(fault as Fault)) {
      throw new PlanError(`${part}: "${fault}" is not a fault (${FAULT_NAMES.join(', ')})`);
    }
    if (at < 0 || colon < 0 || !Number.isInteger(delivery) || delivery < 1) {
      throw new PlanError(`${part}: not fault@delivery:step (e.g. killed-before@1:evt-1:UpdateItem:1:1)`);
    }
    return { fault: fault as Fault, delivery, step: part.slice(colon + 1) };
  });
}

/** A plan that names no step the consumer takes, or a fault its step cannot take. */
export class PlanError extends Error {
  override readonly name = 'PlanError';
}

export const ACKNOWLEDGE = 'acknowledge';

export function stepKey(event: string, operation: string, occurrence: number, attempt: number): string {
  return `${event}:${operation}:${occurrence}:${attempt}`;
}

/** A step in words: `TransactWriteItems evt-000001 (attempt 2)`. */
export function stepLabel(step: Step): string {
  if (step.service === 'mapping') return 'acknowledge';
  const occurrence = step.occurrence > 1 ? ` #${step.occurrence}` : '';
  const attempt = step.attempt > 1 ? ` (attempt ${step.attempt})` : '';
  const event = step.event === '-' ? '' : ` ${step.event}`;
  return `${step.operation}${event}${occurrence}${attempt}`;
}

/**
 * The explorer's vocabulary: a step is one thing the consumer does that another system sees (an
 * attempt of a request to DynamoDB, SQS or the payment provider, or the acknowledgement), and a
 * fault is what happens to the process or the answer at that step. A cell is one scenario run with
 * exactly one fault at one step (depth 1), or one in the first delivery and one in the redelivery
 * (depth 2).
 */

export type Service = 'dynamodb' | 'sqs' | 'provider' | 'mapping';

/** One step of a delivery's trace, keyed so that the same scenario always gives the same keys. */
export interface Step {
  /** `<event>:<operation>:<occurrence>:<attempt>`: what the fault plan and `--cell` name. */
  readonly key: string;
  readonly service: Service;
  /** The event the request is about (`batch`: several; `-`: none it names). */
  readonly event: string;
  /** `TransactWriteItems`, `DeleteMessageBatch`, `Charge` (the provider), `acknowledge`. */
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

/** A fault at a step of one delivery (1: the first, 2: the redelivery after it). */
export interface PlannedFault {
  readonly delivery: number;
  readonly step: string;
  readonly fault: Fault;
}

/** A plan as `--cell` takes it, and as it names a cell: `fault@delivery:step`, comma-separated. */
export function planText(plan: readonly PlannedFault[]): string {
  return plan.map((fault) => `${fault.fault}@${fault.delivery}:${fault.step}`).join(',');
}

export const ACKNOWLEDGE = 'acknowledge';

export function stepKey(event: string, operation: string, occurrence: number, attempt: number): string {
  return `${event}:${operation}:${occurrence}:${attempt}`;
}

/** A step in words: `TransactWriteItems evt-000001 (attempt 2)`. */
export function stepLabel(step: Step): string {
  if (step.service === 'mapping') return 'acknowledge (return, then the mapping deletes)';
  const occurrence = step.occurrence > 1 ? ` #${step.occurrence}` : '';
  const attempt = step.attempt > 1 ? ` (attempt ${step.attempt})` : '';
  const event = step.event === '-' ? '' : ` ${step.event}`;
  return `${step.operation}${event}${occurrence}${attempt}`;
}

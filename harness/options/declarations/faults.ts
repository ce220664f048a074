/** The experiment's injected faults, and --producer, whose process two of them crash. */
import { LOCAL_RUNTIME, PROVIDER_FAULT } from './target-scopes.js';
import type { OptionDeclaration } from './types.js';

export const FAULT_OPTIONS = {
  'poison-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    help:
      'the producer sends an event as an invalid body instead (malformed JSON, a missing field, a wrong ' +
      'type, a zero/negative/fractional/huge amount, an unknown field, a body near the 1 MiB limit of SQS); ' +
      'never applied; dead-lettered after the max receive count by the work-first modes, lost by at-most-once',
    entryPoints: { experiment: { default: 0 } },
  },
  'producer-duplicate-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    help:
      'the producer sends an event twice (same event id, a new SQS message), as a retry after a lost ' +
      'SendMessage response does',
    entryPoints: { experiment: { default: 0 } },
  },
  'provider-lost-response-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: PROVIDER_FAULT,
    help:
      'the charge modes only: the payment provider executes a charge and its response is lost; the consumer ' +
      'times out and retries (with the same idempotency key, or without one: a second charge)',
    entryPoints: { experiment: { default: 0 } },
  },
  producer: {
    kind: 'choice',
    choices: ['direct', 'outbox', 'dual-write'],
    placeholder: 'P',
    group: 'run',
    targets: {
      only: ['embedded'],
      refusal: (target) =>
        `runs on --target embedded only: on ${target} the stack deploys the outbox table and its relay ` +
        '(outputs OutboxTableName, ProducerStateTableName), but the harness does not write them yet; ' +
        'leave --producer out (the harness then sends directly)',
    },
    help:
      'how events reach the queues. direct: the harness sends them. dual-write: a producer process commits ' +
      "its own state (an account's pending balance), then sends; outbox: it commits its state and an " +
      'outbox item in one transaction, and a relay publishes the outbox from the DynamoDB stream ' +
      '(docs/side-effects.md)',
    entryPoints: { experiment: { default: 'direct' } },
  },
  'producer-crash-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      '--producer dual-write or outbox: the producer process is SIGKILLed after committing an event, before ' +
      'sending it (the dual write loses it; the outbox has it committed and relays it)',
    entryPoints: { experiment: { default: 0 } },
  },
  'relay-crash-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      "--producer outbox only: the outbox relay is SIGKILLed after sending a chunk, before checkpointing the stream's " +
      'position; below 1',
    entryPoints: { experiment: { default: 0 } },
  },
  'redelivery-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      'the event source mapping delivers a successfully processed record once more, as AWS documents it ' +
      'may (at least once, even without errors)',
    entryPoints: { experiment: { default: 0 } },
  },
  'throttle-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      "a handler's DynamoDB request is throttled, answered with a 5xx, applied with its response lost (the " +
      'SDK retries it with the same ClientRequestToken), or a transaction is cancelled by a conflict; a ' +
      'proxy in front of DynamoDB Local, the handler code unchanged',
    entryPoints: { experiment: { default: 0 } },
  },
  'outage-after': {
    kind: 'integer',
    min: 0,
    max: 3600,
    placeholder: 'S',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    requires: { option: 'outage-for', why: 'how long the outage lasts' },
    help: 'seconds from the first send to the start of a DynamoDB outage (see --outage-for)',
    entryPoints: { experiment: { default: 0 } },
  },
  'outage-for': {
    kind: 'integer',
    min: 0,
    max: 3600,
    placeholder: 'S',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      'every handler request to DynamoDB fails for S seconds, as an unavailable DynamoDB answers (503 ' +
      'ServiceUnavailable, retried by the SDK, then the record fails): valid messages exhaust ' +
      '--max-receive-count and are dead-lettered. A failed record comes back only after the visibility ' +
      'timeout, so the outage fills the DLQ only when it lasts longer than visibility × max receive count',
    entryPoints: { experiment: { default: 0, defaultText: '0: no outage' } },
  },
  'work-delay': {
    kind: 'integer',
    min: 0,
    max: 900_000,
    placeholder: 'MS',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      "a slow invocation spends MS more before its work, and may outlive its messages' visibility timeout: " +
      'the same message is then in two invocations at once',
    entryPoints: { experiment: { default: 0 } },
  },
  'work-delay-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    requires: { option: 'work-delay', why: 'how much slower a slow invocation is' },
    help: 'share of invocations that are slow',
    entryPoints: { experiment: { default: 0.2, defaultText: '0.2 with --work-delay, else 0' } },
  },
  'kill-rate': {
    kind: 'rate',
    placeholder: 'R',
    group: 'faults',
    targets: LOCAL_RUNTIME,
    help:
      'the environment is SIGKILLed at a random moment of an invocation (a timer, not a code point: also ' +
      'while a transaction is in flight)',
    entryPoints: { experiment: { default: 0 } },
  },
} as const satisfies Record<string, OptionDeclaration>;

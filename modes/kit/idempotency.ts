import type { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import type { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { IdempotencyConfigOptions } from '@aws-lambda-powertools/idempotency/types';
import type { Retention } from '../../contract/retention.js';

/** What a Powertools mode keys its idempotency records on. */
export interface IdempotencyKeying {
  /**
   * Which argument of the idempotent function Powertools selects the key from (its
   * `dataIndexArgument`): the SQS record as delivered, or the validated message body.
   */
  readonly keyedOn: 'record' | 'body';
  /** The IdempotencyConfig options of the mode; the responseHook is common to both and set here. */
  readonly options: Omit<IdempotencyConfigOptions, 'responseHook' | 'lambdaContext' | 'expiresAfterSeconds'>;
  /**
   * How long a COMPLETED record remembers its key. `marker-retention`: the deployment's marker
   * retention (MARKER_TTL_SECONDS), with the age guard refusing events older than that less its
   * margin (modes/kit/age-guard.ts). `powertools-default`: Powertools' one hour and no guard,
   * as the docs' example has it — a guard could not help a key that every redriven copy changes.
   */
  readonly remembers: 'marker-retention' | 'powertools-default';
}

/** The idempotency utility's configuration and store, built once per execution environment. */
export interface Idempotency {
  readonly config: IdempotencyConfig;
  readonly persistenceStore: DynamoDBPersistenceLayer;
  readonly keyedOn: IdempotencyKeying['keyedOn'];
  /** The retention the age guard enforces when the keying has one (`marker-retention`), else undefined. */
  readonly guardedBy?: Retention;
}

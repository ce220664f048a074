import type { CreateTableCommandInput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent } from 'aws-lambda';
import type { Step } from './steps.js';

/**
 * What a team hands the explorer: its handler (a factory over the clients the explorer gives it),
 * its tables and seed items, its events and how they are batched, the queue's settings, and its
 * invariant over the final state.
 */
export interface Scenario<Table extends string = string> {
  /** Names the scenario in the matrix, the report and the cells' replays. */
  readonly name: string;
  /** What the handler promises, in words: printed above its matrix. */
  readonly promise?: string;
  /**
   * Builds one execution environment's handler from the clients the explorer hands it. Called
   * again after a kill or a timeout, as Lambda replaces a dead environment. A handler that builds
   * its own clients (at module scope) is refused: its requests would be neither traced nor faulted.
   */
  readonly handler: HandlerFactory<NoInfer<Table>>;
  /** The tables, by a name of the team's choosing; every cell creates its own copy of each. */
  readonly tables?: Readonly<Record<Table, TableDefinition>>;
  /** Items put in each table before the events are sent. */
  readonly seed?: Readonly<Partial<Record<Table, readonly Record<string, unknown>[]>>>;
  /** The events, in the order the producer sends them (or per cell, when they name the cell). */
  readonly events: readonly ScenarioEvent[] | ((cell: CellContext<Table>) => readonly ScenarioEvent[]);
  readonly queue?: QueueSettings;
  /**
   * How the first delivery round batches the events: sizes, in order (`[2, 2, 1]`). Default: chunks
   * of `queue.batchSize`. Batches run one after another (one invocation at a time).
   */
  readonly batches?: readonly number[];
  /** The violations in a cell's final state: none when the consumer kept its promise. */
  readonly invariant: Invariant<NoInfer<Table>>;
  /** Runs before the events are sent, once per cell, with them (the lab writes its producer's manifest here). */
  readonly setup?: (cell: CellContext<Table>, events: readonly ScenarioEvent[]) => Promise<void>;
  /**
   * More strings that name an event in what the handler sends (the explorer already finds its id,
   * its message's id and receipt handle, and Powertools' hash of the id or the message id).
   */
  readonly aliases?: (event: ScenarioEvent, cell: CellContext<Table>) => readonly string[];
  /**
   * The function timeout, ms (default 2000): an invocation still running then is ended, as Lambda
   * ends it, and what it did not delete is delivered again after it (a visibility timeout at
   * least the function timeout, as AWS requires).
   */
  readonly functionTimeoutMs?: number;
}

export type TableDefinition = Omit<CreateTableCommandInput, 'TableName'>;

export interface ScenarioEvent {
  /**
   * The event's id: the steps and the verdicts name events by it. The explorer attributes a request
   * to an event by finding its id (or its message's id) in what the request carries.
   */
  readonly id: string;
  /** The message body: a string as is, anything else as JSON. */
  readonly body: unknown;
  /** String message attributes. */
  readonly attributes?: Readonly<Record<string, string>>;
  /** A FIFO queue's message group (default: the event's id). */
  readonly groupId?: string;
  /** A FIFO queue's deduplication id (default: the event's id). */
  readonly deduplicationId?: string;
}

export interface QueueSettings {
  /** Default false. A FIFO scenario needs fauxqs patched (see `fifoPatchProblem`). */
  readonly fifo?: boolean;
  /** Receives before SQS moves a message to the DLQ. Default 3. */
  readonly maxReceiveCount?: number;
  /** Records per invocation at most, 1–10. Default 10. */
  readonly batchSize?: number;
  /** The mapping's ReportBatchItemFailures. Default true. */
  readonly reportBatchItemFailures?: boolean;
}

/** One cell's own resources: its tables, its queue. */
export interface CellContext<Table extends string = string> {
  /** Unique per cell: its tables and queues are named after it. */
  readonly id: string;
  /** The scenario's table names → this cell's tables. */
  readonly tables: Readonly<Record<Table, string>>;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly region: string;
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string };
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** What a handler factory is handed: clients whose every attempt is a step of the explorer. */
export interface HandlerClients<Table extends string = string> extends CellContext<Table> {
  /** A document client over `dynamodb`. */
  readonly ddb: DynamoDBDocumentClient;
  /** DynamoDB as deployed: the SDK's own retries, each attempt a step. */
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
  /** For HTTP calls: each attempt a step. */
  readonly fetch: typeof fetch;
  /**
   * Makes another SDK client (say one with `maxAttempts: 1`) a traced one: every attempt it sends
   * within an invocation is a step. `isStep` lets some of its requests pass untraced.
   */
  readonly intercept: <C extends { readonly config: { readonly requestHandler: unknown } }>(
    client: C,
    service: 'dynamodb' | 'sqs',
    isStep?: () => boolean,
  ) => C;
}

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<unknown> | unknown;

export type HandlerFactory<Table extends string = string> = (
  clients: HandlerClients<Table>,
) =>
  | SqsHandler
  | { readonly handler: SqsHandler; readonly destroy?: () => void }
  | Promise<SqsHandler | { readonly handler: SqsHandler; readonly destroy?: () => void }>;

/** A change the table's stream recorded (the table needs a StreamSpecification). */
export interface Change {
  readonly type: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly keys: Record<string, unknown>;
  readonly oldImage?: Record<string, unknown>;
  readonly newImage?: Record<string, unknown>;
}

/** A message the DLQ holds at the end. */
export interface DeadLetter {
  /** The scenario event it was sent as. */
  readonly eventId: string;
  readonly body: string;
  readonly receiveCount: number;
}

/** What an invariant reads: every table, every change, the DLQ, the events, and how it ran. */
export interface FinalState<Table extends string = string> {
  readonly events: readonly ScenarioEvent[];
  /** Every item of each table, unmarshalled, by the scenario's table name. */
  readonly tables: Readonly<Record<Table, readonly Record<string, unknown>[]>>;
  /** Each table's stream, in order: only for a table whose definition enables one. */
  readonly changes: Readonly<Partial<Record<Table, readonly Change[]>>>;
  readonly deadLetters: readonly DeadLetter[];
  readonly cell: CellContext<Table>;
  readonly deliveries: readonly DeliveryRecord[];
}

/**
 * The violations, as sentences: none when the invariant held. The long form adds a short summary
 * for the matrix (`dup 1`), a tone for its colour, and anything the caller keeps (`detail`).
 */
export type Verdict =
  | readonly string[]
  | {
      readonly violations: readonly string[];
      readonly summary?: string;
      /** Exact, or held but with something to see (say a loss an at-most-once consumer may have). */
      readonly tone?: 'exact' | 'held';
      readonly detail?: unknown;
    };

export type Invariant<Table extends string = string> = (
  final: FinalState<Table>,
) => Verdict | Promise<Verdict>;

/**
 * A scenario, its table names inferred from `tables`: the factory's `tables.stock` is then a
 * string, not `string | undefined`.
 */
export function defineScenario<const Table extends string>(
  scenario: Scenario<Table> & { readonly tables?: Readonly<Record<Table, TableDefinition>> },
): Scenario<Table> {
  return scenario;
}

export interface DeliveryRecord {
  /** 1, 2, …: every invocation of the cell, in order, whatever batch it carried. */
  readonly delivery: number;
  /** The highest receive count among its records. */
  readonly receiveCount: number;
  /** The events it carried, in order. */
  readonly events: readonly string[];
  /**
   * returned / threw / killed, or timed out: still running at the function timeout, ended there
   * as Lambda ends it.
   */
  readonly ended: 'returned' | 'threw' | 'killed' | 'timed-out';
  readonly acknowledged: boolean;
  /** Acknowledged, but not deleted: the events the handler reported failed (or the whole batch). */
  readonly failed?: readonly string[];
  /** What the handler threw, or what was wrong with what it returned. */
  readonly error?: string;
  readonly trace: readonly Step[];
}

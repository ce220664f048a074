import {
  type AuthorizationRequest,
  type CallEnvironment,
  type OperationModel,
  requestOf,
  stringInput,
  UnknownResourceError,
} from './service-call.js';

/**
 * DynamoDB's operations as IAM authorizes them. Actions, resource types and the condition keys each
 * action takes: the Service Authorization Reference,
 * https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html
 * (dynamodb:LeadingKeys on GetItem, PutItem, UpdateItem, DeleteItem, ConditionCheckItem, Query,
 * BatchGetItem and BatchWriteItem, not on Scan; dynamodb:EnclosingOperation on GetItem, PutItem,
 * UpdateItem and DeleteItem only). What the keys mean:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
 * (LeadingKeys: the partition key values the request touches, a multi-valued key).
 */

type Input = Readonly<Record<string, unknown>>;
type Item = Readonly<Record<string, unknown>>;

interface Table {
  readonly arn: string;
  /** Unknown for a table the directory does not list (CreateTable's, a mistyped name). */
  readonly partitionKey?: string;
}

/** The table a call names (DynamoDB takes a table's name or its ARN), as IAM's resource. */
function tableOf(name: string, env: CallEnvironment): Table {
  const plain = name.startsWith('arn:') ? name.slice(name.indexOf(':table/') + ':table/'.length) : name;
  const known = env.directory.table(plain);
  if (known) return known;
  const { region, account } = env.directory;
  return { arn: `arn:aws:dynamodb:${region}:${account}:table/${plain}` };
}

function partitionKeyOf(table: Table, name: string): string {
  if (table.partitionKey === undefined) {
    throw new UnknownResourceError(
      `no table ${name} is deployed: its partition key, for dynamodb:LeadingKeys, is unknown`,
    );
  }
  return table.partitionKey;
}

/** A key attribute's value as the condition compares it: the scalar's text ({S}, {N}, {B} base64). */
function scalar(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const attribute = value as Record<string, unknown>;
  const text = attribute.S ?? attribute.N ?? attribute.B;
  return typeof text === 'string' ? text : undefined;
}

function leadingKeys(items: readonly (Item | undefined)[], partitionKey: string): string[] {
  const values = items.map((item) => scalar(item?.[partitionKey])).filter((v) => v !== undefined);
  return [...new Set(values)];
}

/** The context an item-level request adds: its partition keys, and the transaction enclosing it. */
function itemKeys(keys: readonly string[], enclosing?: string): Record<string, string | readonly string[]> {
  // An absent key stays absent: a `Null: false` condition then fails, as on AWS.
  const own: Record<string, string | readonly string[]> =
    keys.length > 0 ? { 'dynamodb:LeadingKeys': keys } : {};
  if (enclosing !== undefined) own['dynamodb:EnclosingOperation'] = enclosing;
  return own;
}

/** GetItem, PutItem, UpdateItem, DeleteItem, ConditionCheckItem on one item (Key, or PutItem's Item). */
function itemRequest(
  action: string,
  spec: Input,
  env: CallEnvironment,
  enclosing?: string,
): AuthorizationRequest {
  const name = stringInput(spec, 'TableName', 'table');
  const table = tableOf(name, env);
  const item = (spec.Key ?? spec.Item) as Item | undefined;
  return requestOf(
    `dynamodb:${action}`,
    table.arn,
    env,
    itemKeys(leadingKeys([item], partitionKeyOf(table, name)), enclosing),
  );
}

const single =
  (action: string): OperationModel =>
  (input, env) => [itemRequest(action, input, env)];

const onTable =
  (action: string): OperationModel =>
  (input, env) => [
    requestOf(`dynamodb:${action}`, tableOf(stringInput(input, 'TableName', 'table'), env).arn, env),
  ];

/** A Query or Scan on an index is authorized on the index's ARN, `<table arn>/index/<name>`. */
function readTarget(
  input: Input,
  env: CallEnvironment,
): { readonly table: Table; readonly name: string; readonly resource: string } {
  const name = stringInput(input, 'TableName', 'table');
  const table = tableOf(name, env);
  const index = input.IndexName;
  return { table, name, resource: typeof index === 'string' ? `${table.arn}/index/${index}` : table.arn };
}

/**
 * The partition key value a Query names: the equality on the partition key in its
 * KeyConditionExpression (through ExpressionAttributeNames/Values), or the legacy KeyConditions' EQ.
 * On an index only the table's partition key is looked for: a global secondary index's own key is
 * not in the directory, so such a query carries no dynamodb:LeadingKeys.
 */
function queriedPartition(input: Input, partitionKey: string): string | undefined {
  const names = (input.ExpressionAttributeNames ?? {}) as Readonly<Record<string, string>>;
  const values = (input.ExpressionAttributeValues ?? {}) as Readonly<Record<string, unknown>>;
  if (typeof input.KeyConditionExpression === 'string') {
    for (const clause of input.KeyConditionExpression.split(/\s+AND\s+/i)) {
      const match = /^\(*\s*([#:]?[\w.-]+)\s*=\s*([#:]?[\w.-]+)\s*\)*$/.exec(clause.trim());
      if (!match?.[1] || !match[2]) continue;
      const [nameToken, valueToken] = match[1].startsWith(':') ? [match[2], match[1]] : [match[1], match[2]];
      const attribute = nameToken.startsWith('#') ? names[nameToken] : nameToken;
      if (attribute === partitionKey && valueToken.startsWith(':')) return scalar(values[valueToken]);
    }
  }
  const legacy = (
    input.KeyConditions as
      | Readonly<Record<string, { ComparisonOperator?: string; AttributeValueList?: unknown[] }>>
      | undefined
  )?.[partitionKey];
  return legacy?.ComparisonOperator === 'EQ' ? scalar(legacy.AttributeValueList?.[0]) : undefined;
}

const query: OperationModel = (input, env) => {
  const { table, name, resource } = readTarget(input, env);
  const value = queriedPartition(input, partitionKeyOf(table, name));
  return [requestOf('dynamodb:Query', resource, env, itemKeys(value === undefined ? [] : [value]))];
};

const scan: OperationModel = (input, env) => [
  requestOf('dynamodb:Scan', readTarget(input, env).resource, env),
];

/** BatchGetItem and BatchWriteItem: their own action, once per table, with every key they touch there. */
function batch(action: string, itemsOf: (entry: unknown) => (Item | undefined)[]): OperationModel {
  return (input, env) =>
    Object.entries((input.RequestItems ?? {}) as Readonly<Record<string, unknown>>).map(([name, entry]) => {
      const table = tableOf(name, env);
      return requestOf(
        `dynamodb:${action}`,
        table.arn,
        env,
        itemKeys(leadingKeys(itemsOf(entry), partitionKeyOf(table, name))),
      );
    });
}

/** A list member of the input; anything else (a malformed call the emulator refuses) as none. */
const list = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);

const batchGetKeys = (entry: unknown): (Item | undefined)[] =>
  list((entry as { Keys?: unknown } | undefined)?.Keys) as Item[];
const batchWriteKeys = (entry: unknown): (Item | undefined)[] =>
  (list(entry) as { PutRequest?: { Item?: Item }; DeleteRequest?: { Key?: Item } }[]).map(
    (write) => write.PutRequest?.Item ?? write.DeleteRequest?.Key,
  );

/**
 * A transaction has no action of its own: each item is authorized as its own operation
 * ("Permissions for Put, Update, Delete, and Get actions are governed by the permissions used for the
 * underlying PutItem, UpdateItem, DeleteItem, and GetItem operations. For the ConditionCheck action,
 * you can use the dynamodb:ConditionCheckItem permission",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html), with
 * dynamodb:EnclosingOperation naming the transaction where the reference defines the key for that
 * action (not ConditionCheckItem: iam-data, read from the reference, refuses it there).
 */
const TRANSACT_WRITE_ACTIONS = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
} as const;

function transaction(operation: 'TransactWriteItems' | 'TransactGetItems'): OperationModel {
  return (input, env) =>
    (list(input.TransactItems) as Readonly<Record<string, Input>>[]).map((entry) => {
      const kind = Object.keys(entry)[0];
      const action =
        operation === 'TransactGetItems'
          ? kind === 'Get' && 'GetItem'
          : TRANSACT_WRITE_ACTIONS[kind as keyof typeof TRANSACT_WRITE_ACTIONS];
      const spec = kind === undefined ? undefined : entry[kind];
      if (!action || !spec) {
        throw new UnknownResourceError(
          `${operation}: an item of kind ${JSON.stringify(kind)} is not one the API defines`,
        );
      }
      return itemRequest(action, spec, env, action === 'ConditionCheckItem' ? undefined : operation);
    });
}

/**
 * A stream as IAM's resource: the table's stream ARN as the deployment names it. DynamoDB Local
 * names its streams `arn:aws:dynamodb:ddblocal:000000000000:table/<name>/stream/<time>`; the table's
 * name leads to the template's `StreamArn`, which the role's policy names.
 */
function streamOf(arn: string, env: CallEnvironment): string {
  const name = /:table\/([^/]+)\/stream\//.exec(arn)?.[1];
  const known = name === undefined ? undefined : env.directory.table(name)?.streamArn;
  if (known === undefined) throw new UnknownResourceError(`${arn} is no stream of a deployed table`);
  return known;
}

/**
 * DynamoDB Streams (a stream mapping's poller): DescribeStream, GetShardIterator and GetRecords on
 * the stream's ARN, ListStreams on '*' (it takes no resource; Service Authorization Reference).
 * GetRecords names only its shard iterator: DynamoDB Local's iterators begin with their stream's
 * ARN and a `|`, which is how the local model finds the stream IAM authorizes the read on.
 */
const STREAM_OPERATIONS: ReadonlyArray<[string, OperationModel]> = [
  [
    'DescribeStream',
    (input, env) => [
      requestOf(
        'dynamodb:DescribeStream',
        streamOf(stringInput(input, 'StreamArn', 'DescribeStream'), env),
        env,
      ),
    ],
  ],
  [
    'GetShardIterator',
    (input, env) => [
      requestOf(
        'dynamodb:GetShardIterator',
        streamOf(stringInput(input, 'StreamArn', 'GetShardIterator'), env),
        env,
      ),
    ],
  ],
  [
    'GetRecords',
    (input, env) => [
      requestOf(
        'dynamodb:GetRecords',
        streamOf(stringInput(input, 'ShardIterator', 'GetRecords').split('|')[0] ?? '', env),
        env,
      ),
    ],
  ],
  ['ListStreams', (_input, env) => [requestOf('dynamodb:ListStreams', '*', env)]],
];

/** The DynamoDB operations the local deployment's callers use, by API operation name. */
export const DYNAMODB_OPERATIONS: ReadonlyMap<string, OperationModel> = new Map([
  ['GetItem', single('GetItem')],
  ['PutItem', single('PutItem')],
  ['UpdateItem', single('UpdateItem')],
  ['DeleteItem', single('DeleteItem')],
  ['Query', query],
  ['Scan', scan],
  ['BatchGetItem', batch('BatchGetItem', batchGetKeys)],
  ['BatchWriteItem', batch('BatchWriteItem', batchWriteKeys)],
  ['TransactWriteItems', transaction('TransactWriteItems')],
  ['TransactGetItems', transaction('TransactGetItems')],
  ['DescribeTable', onTable('DescribeTable')],
  ['CreateTable', onTable('CreateTable')],
  ['DeleteTable', onTable('DeleteTable')],
  // ListTables takes no resource: its only resource is '*'.
  ['ListTables', (_input, env) => [requestOf('dynamodb:ListTables', '*', env)]],
  ...STREAM_OPERATIONS,
]);

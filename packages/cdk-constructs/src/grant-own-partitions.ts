import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';

export interface OwnPartitionsOptions {
  /**
   * The partition keys the grantee may touch, as IAM `StringLike` patterns: `*` matches any
   * characters (`#` included), `?` one. E.g. `RUN#*#MODE#orders`, or `orders#*`.
   */
  readonly leadingKeys: readonly string[];
  /**
   * The DynamoDB actions allowed on those partitions. TransactWriteItems is authorised per
   * contained action (Put → PutItem, Update → UpdateItem, Delete → DeleteItem, ConditionCheck →
   * ConditionCheckItem), with the same condition; add DeleteItem for a function that deletes.
   * @default ['dynamodb:PutItem', 'dynamodb:UpdateItem']
   */
  readonly actions?: readonly string[];
  /**
   * The statement's Sid (letters and digits; unique within the grantee's policy).
   * @default none
   */
  readonly sid?: string;
}

const DEFAULT_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem'] as const;

/** What CDK's own grantWriteData allows on a table's customer managed key. */
const KEY_ACTIONS = [
  'kms:Decrypt',
  'kms:DescribeKey',
  'kms:Encrypt',
  'kms:ReEncrypt*',
  'kms:GenerateDataKey*',
];

/**
 * Lets `grantee` use `actions` on `table`, only on items whose partition key matches one of
 * `leadingKeys`: one Allow statement on the table with
 * `ForAllValues:StringLike: { 'dynamodb:LeadingKeys': leadingKeys }` and
 * `Null: { 'dynamodb:LeadingKeys': 'false' }`, and, if the table has a customer managed key, the
 * key actions CDK's grantWriteData gives.
 *
 * Why both conditions. `dynamodb:LeadingKeys` is multivalued (a BatchWriteItem carries several
 * partition keys), so it takes a set operator; `ForAllValues` requires every key of the request to
 * match (`ForAnyValue` would let one matching key carry others). But `ForAllValues` is also true
 * when the request has no such key at all, so in an Allow a request without a partition key (a
 * Scan) would pass vacuously; `Null: false` requires the key to be present. Conditions of one
 * statement are ANDed. Sources: Amazon DynamoDB, "Using IAM policy conditions for fine-grained
 * access control" (LeadingKeys with ForAllValues),
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html ;
 * IAM, "Single-valued vs. multivalued context keys" (ForAllValues "also returns true if there are
 * no context keys in the request"; care with Allow),
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html ;
 * IAM, "Multivalued context key examples" (a `Null` condition with `false` prevents missing keys
 * from evaluating to true),
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition_examples-multi-valued-context-keys.html
 *
 * A pattern is only as tight as the keys' layout: with `RUN#*#MODE#<mode>`, a mode whose name
 * contained `#MODE#` or a wildcard could match another's partitions. Keep the parts the patterns
 * fix free of `#`, `*` and `?`.
 *
 * @returns the grant (the principal statement, and the key's grant if any)
 * @example
 * grantWriteOwnPartitions(ledger, consumer.fn, {
 *   leadingKeys: ['RUN#*#MODE#orders'],
 *   sid: 'WriteOwnPartitionsOnly',
 * });
 */
export function grantWriteOwnPartitions(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  options: OwnPartitionsOptions,
): iam.Grant {
  if (options.leadingKeys.length === 0) {
    throw new Error('grantWriteOwnPartitions: leadingKeys is empty, which would allow no partition');
  }
  const actions = [...(options.actions ?? DEFAULT_ACTIONS)];
  const foreign = actions.filter((action) => !action.startsWith('dynamodb:'));
  if (actions.length === 0 || foreign.length > 0) {
    throw new Error(
      `grantWriteOwnPartitions: actions must be DynamoDB actions (dynamodb:…), got ${JSON.stringify(actions)}`,
    );
  }
  const grant = iam.Grant.addToPrincipal({
    grantee,
    actions,
    resourceArns: [table.tableArn],
    conditions: {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...options.leadingKeys] },
      // ForAllValues alone is true when the request has no leading key at all.
      Null: { 'dynamodb:LeadingKeys': 'false' },
    },
  });
  // Grant.addToPrincipal takes no Sid; its statement is not frozen until the policy is rendered.
  if (options.sid !== undefined)
    for (const statement of grant.principalStatements) statement.sid = options.sid;
  const keyGrant = table.encryptionKey?.grant(grantee, ...KEY_ACTIONS);
  return keyGrant ? grant.combine(keyGrant) : grant;
}

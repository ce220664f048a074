import { grantWriteOwnPartitions } from '@sqs-delivery-semantics/cdk-constructs';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';

/** A table and a role in a stack of their own, with what the test grants; the role's statements. */
function granted(
  grant: (table: dynamodb.Table, role: iam.Role) => void,
  tableProps: Partial<dynamodb.TableProps> = {},
): { statements: Array<Record<string, unknown>>; tableArn: unknown; keyArn: unknown } {
  const stack = new Stack(new App(), 'Grants');
  const table = new dynamodb.Table(stack, 'Ledger', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    ...tableProps,
  });
  const role = new iam.Role(stack, 'Consumer', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  grant(table, role);
  const template = Template.fromStack(stack);
  const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (policy) => policy.Properties.PolicyDocument.Statement,
  );
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as never);
  return {
    statements,
    tableArn: { 'Fn::GetAtt': [logicalId(table), 'Arn'] },
    keyArn: table.encryptionKey ? { 'Fn::GetAtt': [logicalId(table.encryptionKey), 'Arn'] } : undefined,
  };
}

describe('grantWriteOwnPartitions (packages/cdk-constructs/src/grant-own-partitions.ts)', () => {
  it('allows the actions on the table for matching leading keys only, and only with a key present', () => {
    const { statements, tableArn } = granted((table, role) =>
      grantWriteOwnPartitions(table, role, {
        leadingKeys: ['RUN#*#MODE#orders', 'orders#*'],
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        sid: 'WriteOwnPartitionsOnly',
      }),
    );
    expect(statements).toEqual([
      {
        Sid: 'WriteOwnPartitionsOnly',
        Effect: 'Allow',
        Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        Resource: tableArn,
        Condition: {
          // Every partition key the request touches must match one pattern…
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*#MODE#orders', 'orders#*'] },
          // …and there must be one: ForAllValues over no key at all (a Scan) is true.
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      },
    ]);
  });

  it('defaults to PutItem and UpdateItem (what TransactWriteItems’ Put and Update need), with no Sid', () => {
    const { statements, tableArn } = granted((table, role) =>
      grantWriteOwnPartitions(table, role, { leadingKeys: ['orders#*'] }),
    );
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        Resource: tableArn,
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['orders#*'] },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      },
    ]);
  });

  it('grants the table’s customer managed key as grantWriteData does, when it has one', () => {
    const { statements, keyArn } = granted(
      (table, role) => {
        const grant = grantWriteOwnPartitions(table, role, { leadingKeys: ['orders#*'] });
        expect(grant.success).toBe(true);
      },
      { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED },
    );
    expect(keyArn).toBeDefined();
    expect(statements).toContainEqual({
      Effect: 'Allow',
      Action: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*'],
      Resource: keyArn,
    });
    // The key's grant carries no partition condition: the key knows nothing of items.
    expect(statements).toHaveLength(2);
  });

  it('refuses an empty list of leading keys and actions that are not DynamoDB’s', () => {
    const stack = new Stack(new App(), 'Refusals');
    const table = dynamodb.Table.fromTableName(stack, 'Ledger', 'ledger');
    const role = new iam.Role(stack, 'Consumer', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    expect(() => grantWriteOwnPartitions(table, role, { leadingKeys: [] })).toThrow(
      'grantWriteOwnPartitions: leadingKeys is empty, which would allow no partition',
    );
    expect(() =>
      grantWriteOwnPartitions(table, role, { leadingKeys: ['orders#*'], actions: ['sqs:SendMessage'] }),
    ).toThrow(
      'grantWriteOwnPartitions: actions must be DynamoDB actions (dynamodb:…), got ["sqs:SendMessage"]',
    );
    expect(() => grantWriteOwnPartitions(table, role, { leadingKeys: ['orders#*'], actions: [] })).toThrow(
      'grantWriteOwnPartitions: actions must be DynamoDB actions',
    );
  });
});

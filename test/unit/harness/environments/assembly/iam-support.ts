import { readFileSync } from 'node:fs';
import type { Principal } from '../../../../../harness/environments/assembly/iam/evaluate.js';
import type {
  PolicyDocument,
  PolicyStatement,
} from '../../../../../harness/environments/assembly/iam/policy-document.js';
import type { ResourceDirectory } from '../../../../../harness/environments/assembly/iam/service-call.js';

/**
 * The stack's own policies, copied from `cdk.out/DeliverySemantics.template.json` (a default
 * `npx cdk synth`, the four default modes) with their intrinsics resolved by hand: account
 * 123456789012, us-east-1, partition aws, and each resource's physical name
 * `DeliverySemantics-<logicalId>-<suffix>` as CloudFormation names it. cdk.out is not in git, so the
 * statements live here; test/infra/delivery-semantics-stack.test.ts asserts them against a synth.
 */
export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';

const physical = (logicalId: string) => `DeliverySemantics-${logicalId}-1A2B3C4D5E6F`;
const queueArn = (logicalId: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${physical(logicalId)}`;
const logGroupArn = (logicalId: string) =>
  `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${physical(logicalId)}:*`;

export const LEDGER = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${physical('LedgerB7379752')}`;
export const LEDGER_NAME = physical('LedgerB7379752');
export const AT_LEAST_ONCE_QUEUE = queueArn('AtLeastOnceQueueA3B497EA');
export const AT_LEAST_ONCE_DLQ = queueArn('AtLeastOnceDeadLetterQueueEDC92D28');
export const AT_LEAST_ONCE_FUNCTION = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${physical('AtLeastOnceFunctionEC73DC61')}`;
export const VERIFIER_FUNCTION = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${physical('VerifierFunction')}`;
export const STACK = `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/DeliverySemantics/0f6a3c20-0000-11f0-8000-0a1b2c3d4e5f`;

/** Resources.AtLeastOnceFunctionRoleDefaultPolicy972C0ED1.Properties.PolicyDocument.Statement */
export const AT_LEAST_ONCE_STATEMENTS: readonly PolicyStatement[] = [
  {
    Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
    Effect: 'Allow',
    Resource: logGroupArn('AtLeastOnceFunctionLogs2A378D1C'),
  },
  {
    Action: [
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ],
    Effect: 'Allow',
    Resource: AT_LEAST_ONCE_QUEUE,
  },
  {
    Action: 'sqs:DeleteMessage',
    Condition: { ArnLike: { 'lambda:SourceFunctionArn': `arn:aws:lambda:us-east-1:${ACCOUNT}:function:*` } },
    Effect: 'Deny',
    Resource: AT_LEAST_ONCE_QUEUE,
    Sid: 'OnlyTheEventSourceMappingDeletes',
  },
  {
    Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
    Condition: {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*#MODE#at-least-once'] },
      Null: { 'dynamodb:LeadingKeys': 'false' },
    },
    Effect: 'Allow',
    Resource: LEDGER,
    Sid: 'WriteOwnModePartitionOnly',
  },
];

/** Resources.VerifierRoleDefaultPolicyDF12924B.Properties.PolicyDocument.Statement */
export const VERIFIER_STATEMENTS: readonly PolicyStatement[] = [
  {
    Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
    Effect: 'Allow',
    Resource: logGroupArn('VerifierLogsCE6B8EAA'),
  },
  { Action: ['dynamodb:GetItem', 'dynamodb:Query'], Effect: 'Allow', Resource: LEDGER },
  {
    Action: ['sqs:ChangeMessageVisibility', 'sqs:ReceiveMessage'],
    Effect: 'Allow',
    Resource: [
      AT_LEAST_ONCE_DLQ,
      queueArn('AtMostOnceDeadLetterQueueAC4FF411'),
      queueArn('EffectivelyOnceDeadLetterQueueB69B0BD2'),
      queueArn('PowertoolsIdempotencyDeadLetterQueue52F136A1'),
    ],
  },
];

/** Every AWS::SQS::QueuePolicy of the stack, for its own queue (AtLeastOnceQueuePolicyC74CC2CB …). */
export function queuePolicyOf(queue: string): PolicyDocument {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Action: 'sqs:*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Resource: queue,
      },
    ],
  };
}

/** The stack's resource policies: the queues'. */
export const resourcePolicyOf = (arn: string): PolicyDocument | undefined =>
  arn.startsWith('arn:aws:sqs:') ? queuePolicyOf(arn) : undefined;

export function policy(statements: readonly PolicyStatement[]): PolicyDocument {
  return { Version: '2012-10-17', Statement: statements };
}

export function role(name: string, policyName: string, statements: readonly PolicyStatement[]): Principal {
  return {
    name,
    arn: `arn:aws:sts::${ACCOUNT}:assumed-role/${physical(`${name}Role`)}/session`,
    identityPolicies: [{ name: policyName, policy: policy(statements) }],
  };
}

export const atLeastOnceRole = (statements = AT_LEAST_ONCE_STATEMENTS): Principal =>
  role('AtLeastOnceFunction', 'AtLeastOnceFunctionRoleDefaultPolicy972C0ED1', statements);

export const verifierRole = (): Principal =>
  role('Verifier', 'VerifierRoleDefaultPolicyDF12924B', VERIFIER_STATEMENTS);

/** The operator's policy as docs/deploying.md publishes it (contract/operator-policy.json), for this account. */
export function operator(
  edit: (document: PolicyDocument) => PolicyDocument = (document) => document,
): Principal {
  const text = readFileSync(new URL('../../../../../contract/operator-policy.json', import.meta.url), 'utf8')
    .replaceAll('REGION', REGION)
    .replaceAll('ACCOUNT', ACCOUNT);
  return {
    name: 'operator',
    arn: `arn:aws:iam::${ACCOUNT}:user/operator`,
    identityPolicies: [{ name: 'operator-policy', policy: edit(JSON.parse(text) as PolicyDocument) }],
  };
}

/** The document with `action` taken out of every statement's Action list. */
export function withoutAction(document: PolicyDocument, action: string): PolicyDocument {
  const statements = [document.Statement].flat() as PolicyStatement[];
  return {
    ...document,
    Statement: statements.map((statement) => ({
      ...statement,
      Action: [statement.Action].flat().filter((a) => a !== action),
    })),
  };
}

/** The directory a gateway would build for this deployment. */
export const directory: ResourceDirectory = {
  account: ACCOUNT,
  region: REGION,
  queueArnOfUrl: (url) => {
    const name = url.slice(url.lastIndexOf('/') + 1);
    return name.startsWith('DeliverySemantics-') ? `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}` : undefined;
  },
  queueArnOfName: (name) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`,
  redriveSourcesOf: (dlq) => (dlq === AT_LEAST_ONCE_DLQ ? [AT_LEAST_ONCE_QUEUE] : []),
  moveTaskSourceOf: (handle) => (handle === 'task-1' ? AT_LEAST_ONCE_DLQ : undefined),
  table: (name) => (name === LEDGER_NAME ? { arn: LEDGER, partitionKey: 'pk' } : undefined),
  functionArn: (name) =>
    [AT_LEAST_ONCE_FUNCTION, VERIFIER_FUNCTION].find((arn) => arn === name || arn.endsWith(`:${name}`)),
  stackArn: (name) => (name === 'DeliverySemantics' ? STACK : undefined),
};

export const queueUrl = (arn: string) => `http://127.0.0.1:4566/${ACCOUNT}/${arn.split(':')[5]}`;

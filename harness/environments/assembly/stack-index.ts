import type { PolicyDocument } from './iam/policy-document.js';
import type { ResourceDirectory } from './iam/service-call.js';
import { LOCAL_ACCOUNT } from './locality.js';
import type { ResolvedResource, ResolvedStack } from './resolve-stack.js';

/**
 * Lookups over a resolved stack that the gateway and the IAM model need (names and URLs to ARNs,
 * queue policies by queue), and what the template may say that the local IAM model would get wrong.
 */

/**
 * What the template may say that the local IAM model would get wrong, refused in one line: a
 * Function URL without AWS_IAM (the gateway checks every signature), and a queue policy naming
 * `lambda:SourceFunctionArn`, which AWS does not allow in resource-based policies
 * (https://docs.aws.amazon.com/lambda/latest/dg/permissions-source-function-arn.html).
 */
export function refuseWhatIsNotModelled(stack: ResolvedStack): void {
  for (const url of stack.byType('AWS::Lambda::Url')) {
    const authType = (url.properties as { AuthType?: string }).AuthType;
    if (authType !== 'AWS_IAM') {
      throw new Error(
        `Resources.${url.logicalId} (AWS::Lambda::Url): AuthType ${authType} is not served locally (AWS_IAM only)`,
      );
    }
  }
  for (const policy of stack.byType('AWS::SQS::QueuePolicy')) {
    if (JSON.stringify(policy.properties).includes('lambda:SourceFunctionArn')) {
      throw new Error(
        `Resources.${policy.logicalId} (AWS::SQS::QueuePolicy): lambda:SourceFunctionArn is not valid in a resource-based policy`,
      );
    }
  }
}

export function resourceDirectory(stack: ResolvedStack, region: string): ResourceDirectory {
  const queues = stack.byType('AWS::SQS::Queue');
  const tables = stack.byType('AWS::DynamoDB::Table');
  const fns = stack.byType('AWS::Lambda::Function');
  return {
    account: LOCAL_ACCOUNT,
    region,
    queueArnOfUrl: (url) => queues.find((queue) => queue.attributes.QueueUrl === url)?.attributes.Arn,
    queueArnOfName: (name) => queues.find((queue) => queue.attributes.QueueName === name)?.attributes.Arn,
    table: (name) => {
      const table = tables.find((candidate) => candidate.physicalId === name);
      if (!table) return undefined;
      const keys = (table.properties as { KeySchema: { AttributeName: string; KeyType: string }[] })
        .KeySchema;
      const partitionKey = keys.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '';
      const streamArn = table.attributes.StreamArn;
      return { arn: table.attributes.Arn as string, partitionKey, ...(streamArn ? { streamArn } : {}) };
    },
    functionArn: (nameOrArn) =>
      fns.find((fn) => fn.physicalId === nameOrArn || fn.attributes.Arn === nameOrArn)?.attributes.Arn,
    stackArn: (name) => (name === stack.stackName || name === stack.stackArn ? stack.stackArn : undefined),
    redriveSourcesOf: (deadLetterQueueArn) =>
      queues
        .filter(
          (queue) =>
            (queue.properties as { RedrivePolicy?: { deadLetterTargetArn?: string } }).RedrivePolicy
              ?.deadLetterTargetArn === deadLetterQueueArn,
        )
        .map((queue) => queue.attributes.Arn as string),
  };
}

/** Each queue's resource policy (AWS::SQS::QueuePolicy), by queue ARN. */
/** The stack's queue whose `attribute` (its ARN, URL or name) is `value`. */
export function queueWhere(
  stack: ResolvedStack,
  attribute: 'Arn' | 'QueueUrl' | 'QueueName',
  value: string | undefined,
): ResolvedResource | undefined {
  return stack.byType('AWS::SQS::Queue').find((queue) => queue.attributes[attribute] === value);
}

export function queuePolicies(stack: ResolvedStack): Map<string, PolicyDocument> {
  const byArn = new Map<string, PolicyDocument>();
  for (const policy of stack.byType('AWS::SQS::QueuePolicy')) {
    const p = policy.properties as { PolicyDocument: PolicyDocument; Queues: string[] };
    for (const url of p.Queues) {
      const arn = queueWhere(stack, 'QueueUrl', url)?.attributes.Arn;
      if (arn) byArn.set(arn, p.PolicyDocument);
    }
  }
  return byArn;
}

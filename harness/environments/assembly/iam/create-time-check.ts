import { authorize, type Decision, denialLine, type Principal } from './evaluate.js';
import type { PolicyDocument } from './policy-document.js';
import { contextKeysOf } from './service-call.js';

/**
 * Lambda's refusal of a mapping whose role cannot poll, shaped as the API returns it: HTTP 400,
 * `InvalidParameterValueException`, "The provided execution role does not have permissions to call
 * ReceiveMessage on SQS" (the message CloudFormation shows, e.g. https://github.com/aws/aws-cdk/issues/6770;
 * newer reports read "The function execution role does not have permissions…",
 * https://github.com/anomalyco/sst/issues/5737). The local model adds its denial line.
 */
export class InvalidParameterValueException extends Error {
  override readonly name = 'InvalidParameterValueException';
  readonly statusCode = 400;
  readonly decision: Decision;

  constructor(message: string, decision: Decision) {
    super(message);
    this.decision = decision;
  }
}

/**
 * What the poller needs of the queue. "The Lambda execution role must include the following
 * permissions: sqs:DeleteMessage, sqs:GetQueueAttributes, sqs:ReceiveMessage"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-lambda-function-trigger.html);
 * Lambda's own guide points to AWSLambdaSQSQueueExecutionRole, "the permissions that Lambda needs to
 * read from your Amazon SQS queue" (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html, its
 * execution role section, now https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
 * Checked in the order the refusals people report suggest: a role with none is refused on
 * ReceiveMessage, one without delete on DeleteMessage (GetQueueAttributes' place is a guess).
 */
export const POLLER_ACTIONS = ['ReceiveMessage', 'DeleteMessage', 'GetQueueAttributes'] as const;

/**
 * Lambda's check when an SQS event source mapping is created: the function's role must be allowed
 * each of POLLER_ACTIONS on the queue, else the mapping is refused, as a deployment fails on AWS.
 * Evaluated as the poller calls: over TLS, without lambda:SourceFunctionArn (Lambda adds it only to
 * calls from the function's code: https://docs.aws.amazon.com/lambda/latest/dg/permissions-source-function-arn.html),
 * so a Deny on that key does not refuse the mapping but a Deny that lost its condition does.
 */
export async function checkSqsMappingRole(
  role: Principal,
  queueArn: string,
  resourcePolicyOf: (arn: string) => PolicyDocument | undefined,
): Promise<void> {
  const context = contextKeysOf({ secureTransport: true });
  for (const action of POLLER_ACTIONS) {
    const decision = await authorize(
      role,
      [{ action: `sqs:${action}`, resource: queueArn, context }],
      resourcePolicyOf,
    );
    if (!decision.allowed) {
      throw new InvalidParameterValueException(
        `The provided execution role does not have permissions to call ${action} on SQS (${denialLine(decision)})`,
        decision,
      );
    }
  }
}

/** The services the local deployment serves, by their IAM service prefix. */
export type Service = 'sqs' | 'dynamodb' | 'lambda' | 'cloudformation';

/**
 * One API call as the gateway parsed it: the operation name as the API names it (X-Amz-Target's
 * suffix for SQS JSON and DynamoDB, the query Action for CloudFormation, the REST operation for
 * Lambda, `InvokeFunctionUrl` for a Function URL) and its input (wire JSON: DynamoDB attribute
 * values as `{ S: … }`).
 */
export interface ServiceCall {
  readonly service: Service;
  readonly operation: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** What the gateway knows of the deployed resources, to turn the names a call carries into ARNs. */
export interface ResourceDirectory {
  readonly account: string;
  readonly region: string;
  queueArnOfUrl(queueUrl: string): string | undefined;
  /** GetQueueUrl names a queue by its name. */
  queueArnOfName(queueName: string): string | undefined;
  /** The queues whose redrive policy names `dlqArn` as their dead-letter queue. */
  redriveSourcesOf(dlqArn: string): readonly string[];
  /**
   * The source queue of the move task a handle names. SQS documents the handle as opaque
   * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CancelMessageMoveTask.html),
   * so only whoever started the task can say; without it CancelMessageMoveTask is not modelled.
   */
  moveTaskSourceOf?(taskHandle: string): string | undefined;
  /** The table's ARN and its partition key attribute name. */
  table(
    tableName: string,
  ): { readonly arn: string; readonly partitionKey: string; readonly streamArn?: string } | undefined;
  functionArn(nameOrArn: string): string | undefined;
  stackArn(stackName: string): string | undefined;
}

/**
 * One authorization IAM makes for a call: an action on a resource, with the request context its
 * conditions read. A call may need several (a transaction's items, a move task's implied actions).
 */
export interface AuthorizationRequest {
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, string | readonly string[]>>;
}

/**
 * Where a call comes from. `sourceFunctionArn` is set only for calls from a function's code, never
 * for the event source mapping's poller: Lambda adds lambda:SourceFunctionArn to "AWS API requests
 * that come from within your execution environment", and not to reads "from an event source that's
 * set up as an event source mapping"
 * (https://docs.aws.amazon.com/lambda/latest/dg/permissions-source-function-arn.html).
 */
export interface RequestContext {
  readonly secureTransport: boolean;
  readonly sourceFunctionArn?: string;
}

/** What an operation's model reads besides the call's input. */
export interface CallEnvironment {
  readonly directory: ResourceDirectory;
  /** The context keys every request of the call carries (contextKeysOf). */
  readonly keys: Readonly<Record<string, string>>;
}

/** An operation's model: the authorizations one call of it needs. */
export type OperationModel = (
  input: Readonly<Record<string, unknown>>,
  env: CallEnvironment,
) => AuthorizationRequest[];

/**
 * The keys IAM puts in every request's context:
 * - aws:SecureTransport, 'true' or 'false' as the request came over TLS or not
 *   (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-securetransport);
 * - lambda:SourceFunctionArn from a function's code only (RequestContext).
 */
export function contextKeysOf(context: RequestContext): Record<string, string> {
  const keys: Record<string, string> = { 'aws:SecureTransport': String(context.secureTransport) };
  if (context.sourceFunctionArn !== undefined) keys['lambda:SourceFunctionArn'] = context.sourceFunctionArn;
  return keys;
}

/** One request of a call: its action on its resource, the call's keys plus the request's own. */
export function requestOf(
  action: string,
  resource: string,
  env: CallEnvironment,
  own: Readonly<Record<string, string | readonly string[]>> = {},
): AuthorizationRequest {
  return { action, resource, context: { ...env.keys, ...own } };
}

/** A call the local IAM model has no table entry for: refused, never allowed by default. */
export class UnmodelledCallError extends Error {
  override readonly name = 'UnmodelledCallError';
  constructor(service: Service, operation: string, detail?: string) {
    super(
      `the local IAM model does not know which actions ${service}:${operation} needs` +
        `${detail ? ` (${detail})` : ''}; add it to harness/environments/assembly/iam/actions.ts`,
    );
  }
}

/**
 * A call naming a resource the model cannot turn into an ARN (or a table whose key it does not
 * know): the gateway answers with the service's not-found error, as the emulator would.
 */
export class UnknownResourceError extends Error {
  override readonly name = 'UnknownResourceError';
}

/** A string member of a call's input, or an UnknownResourceError naming what is missing. */
export function stringInput(input: Readonly<Record<string, unknown>>, member: string, what: string): string {
  const value = input[member];
  if (typeof value !== 'string' || value === '') {
    throw new UnknownResourceError(`the call's ${member} (${JSON.stringify(value)}) names no ${what}`);
  }
  return value;
}

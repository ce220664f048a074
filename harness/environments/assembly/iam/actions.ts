import { DYNAMODB_OPERATIONS } from './dynamodb-actions.js';
import {
  type AuthorizationRequest,
  type CallEnvironment,
  contextKeysOf,
  type OperationModel,
  type RequestContext,
  type ResourceDirectory,
  requestOf,
  type Service,
  type ServiceCall,
  stringInput,
  UnknownResourceError,
  UnmodelledCallError,
} from './service-call.js';
import { SQS_OPERATIONS } from './sqs-actions.js';

export type { RequestContext } from './service-call.js';
export { UnknownResourceError, UnmodelledCallError } from './service-call.js';

/**
 * A function's ARN, as Lambda authorizes calls on it: the directory's, else the one its name or
 * partial ARN gives; a Qualifier (version or alias) makes it the qualified ARN
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-api-permissions-ref.html).
 */
function functionArnOf(input: Readonly<Record<string, unknown>>, env: CallEnvironment): string {
  const name = stringInput(input, 'FunctionName', 'function');
  const { region, account } = env.directory;
  const arn =
    env.directory.functionArn(name) ??
    (name.startsWith('arn:')
      ? name
      : /^\d{12}:function:/.test(name)
        ? `arn:aws:lambda:${region}:${name}`
        : `arn:aws:lambda:${region}:${account}:function:${name}`);
  return typeof input.Qualifier === 'string' ? `${arn}:${input.Qualifier}` : arn;
}

const onFunction =
  (action: string): OperationModel =>
  (input, env) => [requestOf(`lambda:${action}`, functionArnOf(input, env), env)];

/**
 * A Function URL with AuthType AWS_IAM: "Starting in October 2025, new function URLs will require
 * both lambda:InvokeFunctionUrl and lambda:InvokeFunction permissions"
 * (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html, as it reads today). The first
 * carries lambda:FunctionUrlAuthType, the second lambda:InvokedViaFunctionUrl, the keys the Service
 * Authorization Reference lists for those actions
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awslambda.html), so a
 * policy can allow InvokeFunction through the URL only. A URL with AuthType NONE is not authorized by
 * identity policies at all, and is not modelled here.
 */
const invokeFunctionUrl: OperationModel = (input, env) => {
  const arn = functionArnOf(input, env);
  return [
    requestOf('lambda:InvokeFunctionUrl', arn, env, { 'lambda:FunctionUrlAuthType': 'AWS_IAM' }),
    requestOf('lambda:InvokeFunction', arn, env, { 'lambda:InvokedViaFunctionUrl': 'true' }),
  ];
};

/** Lambda's REST operations by their API names (Invoke is lambda:InvokeFunction). */
const LAMBDA_OPERATIONS: ReadonlyMap<string, OperationModel> = new Map([
  ['Invoke', onFunction('InvokeFunction')],
  ['GetFunctionConfiguration', onFunction('GetFunctionConfiguration')],
  ['GetFunction', onFunction('GetFunction')],
  ['InvokeFunctionUrl', invokeFunctionUrl],
]);

/**
 * DescribeStacks on the stack's ARN, `arn:aws:cloudformation:<region>:<account>:stack/<name>/<id>`
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awscloudformation.html):
 * the id is CloudFormation's, so only the directory can name it.
 */
const describeStacks: OperationModel = (input, env) => {
  if (input.StackName === undefined) {
    throw new UnmodelledCallError('cloudformation', 'DescribeStacks', 'without a StackName: every stack');
  }
  const name = stringInput(input, 'StackName', 'stack');
  const arn = env.directory.stackArn(name) ?? (name.startsWith('arn:') ? name : undefined);
  if (!arn) throw new UnknownResourceError(`Stack with id ${name} does not exist`);
  return [requestOf('cloudformation:DescribeStacks', arn, env)];
};

const OPERATIONS: Readonly<Record<Service, ReadonlyMap<string, OperationModel>>> = {
  sqs: SQS_OPERATIONS,
  dynamodb: DYNAMODB_OPERATIONS,
  lambda: LAMBDA_OPERATIONS,
  cloudformation: new Map([['DescribeStacks', describeStacks]]),
};

/**
 * What IAM authorizes for one API call, per AWS's Service Authorization Reference: each request an
 * action on a resource with its context (aws:SecureTransport always, lambda:SourceFunctionArn from a
 * function's code). A call is allowed only if every request is. An operation this table does not
 * know throws UnmodelledCallError: nothing is allowed by default.
 */
export function authorizationRequestsOf(
  call: ServiceCall,
  directory: ResourceDirectory,
  context: RequestContext,
): AuthorizationRequest[] {
  const model = OPERATIONS[call.service]?.get(call.operation);
  if (!model) throw new UnmodelledCallError(call.service, call.operation);
  const requests = model(call.input, { directory, keys: contextKeysOf(context) });
  // A batch or transaction touching the same partition twice asks the same question twice.
  const unique = new Map(requests.map((request) => [JSON.stringify(request), request]));
  return [...unique.values()];
}

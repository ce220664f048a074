import {
  type DeployedFunction,
  describeStacks,
  functionConfiguration,
  invoke,
  type MoveTasks,
} from './control-plane.js';
import { functionUrlAnswer, functionUrlEvent } from './function-url.js';
import {
  FUNCTION_URL_PATH,
  type GatewayHandlers,
  type ParsedCall,
  type RawRequest,
} from './gateway/gateway.js';
import { authorizationRequestsOf } from './iam/actions.js';
import { authorize, type Decision } from './iam/evaluate.js';
import type { PolicyDocument } from './iam/policy-document.js';
import type { ResourceDirectory } from './iam/service-call.js';
import { LOCAL_ACCOUNT } from './locality.js';
import type { Caller } from './principals.js';
import type { ResolvedStack } from './resolve-stack.js';

export type Handlers = Pick<GatewayHandlers<Caller>, 'authorize' | 'answer'>;

/**
 * What the gateway asks of a deployment: IAM's decision for a call (iam/), and the answers of the
 * calls no emulator serves (control-plane.ts, Function URLs).
 */

/** Authorization of every call, then the control plane's answers (the rest goes to an emulator). */
export function handlers(
  stack: ResolvedStack,
  directory: ResourceDirectory,
  functions: ReadonlyMap<string, DeployedFunction>,
  moveTasks: MoveTasks,
  region: string,
  resourcePolicies: ReadonlyMap<string, PolicyDocument>,
  onDenial: (decision: Decision) => void,
): Handlers {
  const functionOf = (call: ParsedCall) => {
    const name = String(call.input.FunctionName ?? '');
    return [...functions.values()].find((fn) => fn.name === name || fn.arn === name);
  };
  return {
    authorize: async (caller, call, secureTransport) => {
      if (caller.kind === 'deployer') return { allowed: true };
      const requests = authorizationRequestsOf(call, directory, {
        secureTransport,
        ...(caller.kind === 'function' ? { sourceFunctionArn: caller.functionArn } : {}),
      });
      const decision = await authorize(caller.principal, requests, (arn) => resourcePolicies.get(arn));
      if (decision.allowed) return { allowed: true };
      onDenial(decision);
      return { allowed: false, message: awsDenialMessage(caller, decision) };
    },
    answer: async (caller, call, raw) => {
      if (call.service === 'cloudformation') return describeStacks(stack, call.input);
      if (call.service === 'sqs' && call.operation === 'StartMessageMoveTask')
        return moveTasks.start(call.input);
      if (call.service === 'sqs' && call.operation === 'ListMessageMoveTasks')
        return moveTasks.list(call.input);
      if (call.service !== 'lambda') return undefined;
      const fn = functionOf(call);
      if (!fn) {
        return {
          status: 404,
          headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' },
          body: JSON.stringify({
            Type: 'User',
            Message: `Function not found: ${String(call.input.FunctionName)}`,
          }),
        };
      }
      if (call.operation === 'InvokeFunctionUrl') {
        const hasUrl = stack
          .byType('AWS::Lambda::Url')
          .some((url) => (url.properties as { TargetFunctionArn?: string }).TargetFunctionArn === fn.arn);
        if (!hasUrl)
          return { status: 404, headers: { 'content-type': 'application/json' }, body: '{"Message":null}' };
        return invokeFunctionUrl(fn, caller, raw, region);
      }
      if (call.operation === 'GetFunctionConfiguration') return functionConfiguration(fn);
      if (call.operation === 'Invoke') {
        const type = String(raw.headers['x-amz-invocation-type'] ?? 'RequestResponse');
        if (type !== 'RequestResponse' || new URL(raw.url, 'http://gateway').searchParams.has('Qualifier')) {
          return {
            status: 400,
            headers: {
              'content-type': 'application/json',
              'x-amzn-errortype': 'InvalidParameterValueException',
            },
            body: JSON.stringify({
              Type: 'User',
              Message: `the local runtime serves synchronous invocations of $LATEST only (InvocationType ${type})`,
            }),
          };
        }
        return invoke(fn, raw.body, raw.headers['x-amz-log-type'] === 'Tail');
      }
      return undefined;
    },
  };
}

/**
 * A call to a function's URL (AWS_IAM: its caller was authorized as any other): the HTTP request as
 * the payload 2.0 event, the function's answer as HTTP (harness/environments/assembly/function-url.ts).
 */
async function invokeFunctionUrl(fn: DeployedFunction, caller: Caller, raw: RawRequest, region: string) {
  const url = new URL(raw.url, 'http://gateway');
  const path = FUNCTION_URL_PATH.exec(url.pathname)?.[2] ?? '/';
  const event = functionUrlEvent(
    { method: raw.method, path, query: url.search, headers: raw.headers, body: raw.body },
    {
      accountId: LOCAL_ACCOUNT,
      urlId: fn.name.toLowerCase(),
      region,
      ...(caller.kind !== 'deployer' ? { caller: { accessKeyId: '', userArn: caller.principal.arn } } : {}),
    },
  );
  const answer = functionUrlAnswer(await fn.local.invoke(event));
  return { status: answer.status, headers: answer.headers, body: answer.body };
}

/** AWS's wording of a denial, which the SDK's error carries as its message. */
function awsDenialMessage(caller: Exclude<Caller, { kind: 'deployer' }>, decision: Decision): string {
  const why =
    decision.reason === 'explicit deny'
      ? `with an explicit deny in ${decision.statement?.includes('resource policy') ? 'a resource-based' : 'an identity-based'} policy`
      : `because no identity-based policy allows the ${decision.action} action`;
  return `User: ${caller.principal.arn} is not authorized to perform: ${decision.action} on resource: ${decision.resource} ${why}`;
}

import { randomBytes } from 'node:crypto';
import type { Principal } from './iam/evaluate.js';
import type { PolicyDocument } from './iam/policy-document.js';
import type { ResolvedStack } from './resolve-stack.js';

/**
 * Who calls a local deployment, each with credentials of its own, so the gateway knows the caller
 * from the signature alone (as IAM knows a role's session from its keys):
 * - a function's code: its role, and `lambda:SourceFunctionArn` = the function (Lambda adds it to
 *   every call signed with the function's credentials);
 * - a mapping's poller: the same role, without that key (Lambda's service polls for the function);
 * - the operator: a person's policy (contract/operator-policy.json, the one docs/deploying.md prints);
 * - CloudFormation itself, creating the resources: allowed everything, as the deployer's role is.
 */
export type Caller =
  | { readonly kind: 'deployer'; readonly name: string }
  | {
      readonly kind: 'function';
      readonly name: string;
      readonly principal: Principal;
      readonly functionArn: string;
    }
  | { readonly kind: 'poller'; readonly name: string; readonly principal: Principal }
  | { readonly kind: 'operator'; readonly name: string; readonly principal: Principal };

export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export class Principals {
  private readonly byKey = new Map<string, { caller: Caller; secretAccessKey: string }>();

  /** New credentials that identify `caller`. */
  add(caller: Caller): Credentials {
    const accessKeyId = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
    const secretAccessKey = randomBytes(30).toString('base64');
    this.byKey.set(accessKeyId, { caller, secretAccessKey });
    return { accessKeyId, secretAccessKey };
  }

  callerOf(accessKeyId: string): { readonly caller: Caller; readonly secretAccessKey: string } | undefined {
    return this.byKey.get(accessKeyId);
  }
}

/**
 * A role's identity policies, as IAM would hold them: its inline `Policies`, every AWS::IAM::Policy
 * attached to it, and its managed policies. The stack attaches no managed policy (each function's
 * logging is granted inline by CDK); one in a template is refused rather than guessed at.
 */
export function rolePolicies(
  stack: ResolvedStack,
  roleName: string,
): { readonly name: string; readonly policy: PolicyDocument }[] {
  const role = [...stack.resources.values()].find(
    (resource) => resource.type === 'AWS::IAM::Role' && resource.physicalId === roleName,
  );
  if (!role) throw new Error(`no AWS::IAM::Role named ${roleName} in ${stack.stackName}`);
  const properties = role.properties as {
    Policies?: { PolicyName: string; PolicyDocument: PolicyDocument }[];
    ManagedPolicyArns?: string[];
  };
  if (properties.ManagedPolicyArns?.length) {
    throw new Error(
      `Resources.${role.logicalId} (AWS::IAM::Role): ManagedPolicyArns ${properties.ManagedPolicyArns.join(', ')} ` +
        'are not modelled by the local IAM (their documents are not in the template)',
    );
  }
  const inline = (properties.Policies ?? []).map((policy) => ({
    name: policy.PolicyName,
    policy: policy.PolicyDocument,
  }));
  const attached = stack.byType('AWS::IAM::Policy').flatMap((resource) => {
    const p = resource.properties as { PolicyName: string; PolicyDocument: PolicyDocument; Roles?: string[] };
    return (p.Roles ?? []).includes(roleName) ? [{ name: p.PolicyName, policy: p.PolicyDocument }] : [];
  });
  return [...inline, ...attached];
}

/** The role's session as IAM names it in a denial: `arn:aws:sts::<account>:assumed-role/<role>/<session>`. */
export function assumedRoleArn(account: string, roleName: string, session: string): string {
  return `arn:aws:sts::${account}:assumed-role/${roleName}/${session}`;
}

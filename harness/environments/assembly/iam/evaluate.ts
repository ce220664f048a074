import { type RequestAnalysis, runSimulation } from '@cloud-copilot/iam-simulate';
import type { NamedPolicy, PolicyDocument } from './policy-document.js';
import type { AuthorizationRequest } from './service-call.js';

/**
 * Policy evaluation by @cloud-copilot/iam-simulate (AGPL-3.0-or-later, a dev dependency of the lab
 * only): identity and resource policies with every condition operator, explicit Deny over Allow,
 * deny by default, same- and cross-account rules, as
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html describes.
 * It validates each request against iam-data (the Service Authorization Reference): an unknown
 * action, a resource of the wrong type or a malformed policy is an error, thrown here, never an
 * allow. A context key the reference does not list for the action is dropped by the library
 * (`ignoredContextKeys`): thrown too, since a condition on a dropped key could never match.
 * A condition on a key the request lacks does not match (ArnLike on an absent
 * lambda:SourceFunctionArn; `Null: false` on an absent dynamodb:LeadingKeys), as in IAM:
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html#Conditions_Null
 */

/** Who signs a request: a role's session, with the role's identity policies. */
export interface Principal {
  readonly name: string;
  /** role or assumed-role ARN */
  readonly arn: string;
  readonly identityPolicies: readonly NamedPolicy[];
}

export interface Decision {
  readonly allowed: boolean;
  /** The principal's name. */
  readonly principal: string;
  readonly action: string;
  readonly resource: string;
  /** 'explicit deny' | 'no statement allows it' */
  readonly reason?: string;
  /**
   * The deciding statement: its policy name and Sid (or its path, `Statement[i]`, when it has no
   * Sid). For an explicit deny, the Deny; when nothing allows it, the Allow statements whose action
   * and resource matched but whose condition did not hold, if any.
   */
  readonly statement?: string;
  /** When nothing allows it: the identity policies that were read, none of which allows it. */
  readonly policies?: readonly string[];
}

/** A request iam-simulate could not evaluate: a model or policy error, never a denial. */
export class PolicyEvaluationError extends Error {
  override readonly name = 'PolicyEvaluationError';
}

type StatementAnalysis = NonNullable<RequestAnalysis['identityAnalysis']>['denyStatements'][number];
type ResourcePolicyOf = (arn: string) => PolicyDocument | undefined;

/**
 * The first request of a call IAM would deny, or the call allowed. Same-account requests: an
 * identity policy's Allow suffices unless a Deny applies, in an identity policy or the resource's
 * own (a queue's). Decisions are cached per principal and request (the gateway asks thousands of
 * times per run): a principal's policies are read as immutable, so a changed policy is a new
 * Principal object; resource policies are compared by content.
 */
export async function authorize(
  principal: Principal,
  requests: readonly AuthorizationRequest[],
  resourcePolicyOf: ResourcePolicyOf,
): Promise<Decision> {
  const decisions = await Promise.all(
    requests.map((request) => cachedDecision(principal, request, resourcePolicyOf(request.resource))),
  );
  const decision = decisions.find((d) => !d.allowed) ?? decisions[0];
  if (!decision) throw new PolicyEvaluationError(`${principal.name}: a call with no request to authorize`);
  return decision;
}

/** One line for the log: the principal, the action, the resource and the deciding statement. */
export function denialLine(decision: Decision): string {
  const statement =
    decision.statement === undefined
      ? ''
      : decision.reason === 'explicit deny'
        ? ` by ${decision.statement}`
        : ` (matched but its condition does not hold: ${decision.statement})`;
  const read =
    decision.statement === undefined && decision.policies !== undefined
      ? ` in ${decision.policies.length === 0 ? 'no identity policy' : decision.policies.join(', ')}`
      : '';
  return `IAM denied ${decision.principal} ${decision.action} on ${decision.resource}: ${decision.reason}${read}${statement}`;
}

/** Per principal (its policies), the decision for each request and resource policy, by their JSON. */
const MAX_CACHED_PER_PRINCIPAL = 10_000;
const cache = new WeakMap<Principal, Map<string, Promise<Decision>>>();

function cachedDecision(
  principal: Principal,
  request: AuthorizationRequest,
  resourcePolicy: PolicyDocument | undefined,
): Promise<Decision> {
  const entries = cache.get(principal) ?? new Map<string, Promise<Decision>>();
  cache.set(principal, entries);
  const key = JSON.stringify([request, resourcePolicy ?? null]);
  const hit = entries.get(key);
  if (hit) return hit;
  const decision = evaluate(principal, request, resourcePolicy);
  // Keys that differ per event (Powertools' records) would grow it without end: oldest out first.
  if (entries.size >= MAX_CACHED_PER_PRINCIPAL) entries.delete(entries.keys().next().value as string);
  entries.set(key, decision);
  // An evaluation that failed is not remembered: the caller sees its error, the next call retries.
  decision.catch(() => entries.get(key) === decision && entries.delete(key));
  return decision;
}

/** The account an ARN names (`arn:partition:service:region:account:…`), if any. */
function accountOf(arn: string): string | undefined {
  return arn.startsWith('arn:') ? arn.split(':')[4] || undefined : undefined;
}

async function evaluate(
  principal: Principal,
  request: AuthorizationRequest,
  resourcePolicy: PolicyDocument | undefined,
): Promise<Decision> {
  const asked = `${principal.name} ${request.action} on ${request.resource}`;
  const response = await runSimulation(
    {
      request: {
        principal: principal.arn,
        action: request.action,
        resource: {
          resource: request.resource,
          accountId: accountOf(request.resource) ?? accountOf(principal.arn) ?? '',
        },
        contextVariables: Object.fromEntries(
          Object.entries(request.context).map(([key, value]) => [
            key,
            typeof value === 'string' ? value : [...value],
          ]),
        ),
      },
      identityPolicies: principal.identityPolicies.map(({ name, policy }) => ({ name, policy })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      resourcePolicy,
    },
    { simulationMode: 'Strict' },
  );
  if (response.resultType === 'error') {
    throw new PolicyEvaluationError(`${asked}: iam-simulate refused it: ${JSON.stringify(response.errors)}`);
  }
  if (response.resultType !== 'single') {
    throw new PolicyEvaluationError(
      `${asked}: a wildcard resource; the model asks about one resource at a time`,
    );
  }
  const { analysis, ignoredContextKeys = [] } = response.result;
  if (ignoredContextKeys.length > 0) {
    throw new PolicyEvaluationError(
      `${asked}: iam-simulate drops context keys ${ignoredContextKeys.join(', ')}, which the Service ` +
        `Authorization Reference (iam-data) does not list for ${request.action}; a condition on them ` +
        'could never match, so harness/environments/assembly/iam/actions.ts must not send them',
    );
  }
  const decided = { principal: principal.name, action: request.action, resource: request.resource };
  if (analysis.result === 'Allowed') return { allowed: true, ...decided };
  const labelled = statementsOf(analysis, request.resource);
  if (analysis.result === 'ExplicitlyDenied') {
    const deny = labelled.find(({ analysis: s }) => s.statement.isDeny() && matches(s));
    return { allowed: false, ...decided, reason: 'explicit deny', statement: deny?.label };
  }
  const nearMisses = labelled.filter(
    ({ analysis: s }) => s.statement.isAllow() && matchesButCondition(s) && s.conditionMatch === 'NoMatch',
  );
  return {
    allowed: false,
    ...decided,
    reason: 'no statement allows it',
    statement: nearMisses.length > 0 ? nearMisses.map((s) => s.label).join(', ') : undefined,
    policies: principal.identityPolicies.map((policy) => policy.name),
  };
}

/** Every statement iam-simulate analysed, named as the denial line names it. */
function statementsOf(
  analysis: RequestAnalysis,
  resource: string,
): { readonly label: string; readonly analysis: StatementAnalysis }[] {
  const identity = analysis.identityAnalysis;
  const own = analysis.resourceAnalysis;
  const label = (policy: string, s: StatementAnalysis) =>
    `${policy} ${s.statement.sid() ?? s.statement.path()}`;
  return [
    ...[...(identity?.denyStatements ?? []), ...(identity?.unmatchedStatements ?? [])].map((s) => ({
      label: label(s.policyId, s),
      analysis: s,
    })),
    ...[...(own?.denyStatements ?? []), ...(own?.unmatchedStatements ?? [])].map((s) => ({
      label: label(`the resource policy of ${resource}`, s),
      analysis: s,
    })),
  ];
}

function matchesButCondition(s: StatementAnalysis): boolean {
  return s.actionMatch && s.resourceMatch && s.principalMatch !== 'NoMatch';
}

function matches(s: StatementAnalysis): boolean {
  return matchesButCondition(s) && s.conditionMatch === 'Match';
}

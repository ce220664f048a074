/**
 * An IAM policy document as a template carries it once its intrinsics are resolved: identity
 * policies (AWS::IAM::Policy, a role's inline Policies) and resource policies (AWS::SQS::QueuePolicy).
 * Its statements stay as JSON: @cloud-copilot/iam-policy validates and reads them, and refuses a
 * malformed one (harness/environments/assembly/iam/evaluate.ts throws what it says).
 * Grammar: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_grammar.html
 */
export interface PolicyDocument {
  readonly Version?: string;
  readonly Id?: string;
  readonly Statement: PolicyStatement | readonly PolicyStatement[];
}

/** One statement: Sid, Effect, (Not)Principal, (Not)Action, (Not)Resource, Condition. */
export type PolicyStatement = Readonly<Record<string, unknown>>;

/** An identity policy with the name the denial lines use (the AWS::IAM::Policy's PolicyName). */
export interface NamedPolicy {
  readonly name: string;
  readonly policy: PolicyDocument;
}

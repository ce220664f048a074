import type { CloudAssembly, TemplateResource } from './cloud-assembly.js';
import {
  creationOrder,
  type IntrinsicContext,
  resolveValue,
  UnsupportedTemplateError,
} from './intrinsics.js';
import {
  deterministicUuid,
  generatedName,
  IGNORED_TYPES,
  RESOURCE_TYPES,
  type ResourceTypeSpec,
  type Returns,
} from './resource-types.js';

/**
 * A stack's template resolved into concrete local resources: every name, ARN and URL as the
 * deployment in `scope` would have it, every property with its intrinsics resolved, the outputs,
 * and the list of what is ignored and why. What it cannot honour is refused
 * (UnsupportedTemplateError, one line): a type, a property, an intrinsic, a condition, a rule, a
 * parameter without a default. Pure but for `createdAt`'s default (the clock).
 */

/** Where and how the stack is deployed locally. */
export interface StackScope {
  readonly account: string;
  readonly region: string;
  /** Varies the generated names' suffixes and the UUIDs, so two local deployments differ. */
  readonly salt?: string;
  /** The URL a queue of this name is reached at (the deployer decides: it serves SQS locally). */
  queueUrl(queueName: string): string;
  /** The URL of a Function URL for the function. */
  functionUrl(functionName: string): string;
  /** The deployment's creation time (a table stream's label). @default now */
  readonly createdAt?: Date;
}

export interface ResolvedResource {
  readonly logicalId: string;
  readonly type: string;
  /** The resource's name (a queue's, table's, function's…); a UUID for mappings and keys. */
  readonly name: string;
  /** What `Ref` returns (a queue's URL, a topic's ARN, a table's name…). */
  readonly physicalId: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** The template's properties, fully resolved (no intrinsic left). */
  readonly properties: Record<string, unknown>;
}

export interface Ignored {
  readonly what: string;
  readonly why: string;
}

export interface ResolvedStack {
  readonly stackName: string;
  readonly stackArn: string;
  readonly resources: ReadonlyMap<string, ResolvedResource>;
  byType(type: string): ResolvedResource[];
  readonly outputs: Readonly<Record<string, string>>;
  /** Logical ids in an order CloudFormation could create them: after what they reference or DependsOn. */
  readonly creationOrder: readonly string[];
  readonly ignored: readonly Ignored[];
}

const BOOTSTRAP_WHY =
  "asserts the CDK bootstrap stack's version (SSM /cdk-bootstrap/…/version); locally there is no bootstrap stack and no asset bucket: the assets are read from the assembly's folders";
const RESOURCE_ATTRIBUTES: Readonly<Record<string, string | undefined>> = {
  Type: undefined,
  Properties: undefined,
  DependsOn: undefined, // honoured: creationOrder
  Metadata: "CDK's construct paths and asset hints: the assets manifest names the code instead",
  DeletionPolicy:
    'what CloudFormation keeps when the stack is deleted: a local deployment is thrown away whole',
  UpdateReplacePolicy:
    'what CloudFormation keeps when a resource is replaced: a local deployment is never updated',
};
const SECTIONS = 'AWSTemplateFormatVersion Description Metadata Parameters Rules Resources Outputs'.split(
  ' ',
);
/**
 * CDK's condition in an environment-agnostic template: whether the Region has AWS::CDK::Metadata.
 * Only the metadata (ignored) uses it; a resource that did would be refused for its `Condition`.
 */
const CDK_METADATA_CONDITION = 'CDKMetadataAvailable';
const CDK_METADATA_CONDITION_WHY = "decides only whether CDK's usage metadata (ignored) is deployed";

/** Resolves `assembly`'s template for a local deployment in `scope`. */
export function resolveStack(
  assembly: Pick<CloudAssembly, 'stackName' | 'template' | 'account' | 'region'>,
  scope: StackScope,
): ResolvedStack {
  const { stackName, template } = assembly;
  const salt = scope.salt ?? '';
  const createdAt = scope.createdAt ?? new Date();
  const ignored = new Map<string, { why: string; who: string[] }>();
  const ignore = (what: string, why: string, who?: string) => {
    const entry = ignored.get(what) ?? { why, who: [] };
    if (who !== undefined) entry.who.push(who);
    ignored.set(what, entry);
  };
  const refuse = (message: string) => new UnsupportedTemplateError(message);

  for (const section of Object.keys(template)) {
    if (SECTIONS.includes(section)) continue;
    const names = section === 'Transform' ? [] : Object.keys((template[section] as object | null) ?? {});
    if (section === 'Conditions') {
      for (const name of names) {
        if (name !== CDK_METADATA_CONDITION)
          throw refuse(`Conditions.${name}: conditions are not supported by the local runtime`);
        ignore(`condition ${name}`, CDK_METADATA_CONDITION_WHY);
      }
    } else if (section !== 'Mappings' || names.length > 0) {
      throw refuse(
        `${section}${names[0] ? `.${names[0]}` : ''}: ${section} is not supported by the local runtime`,
      );
    }
  }
  // A template synthesized for a Region or account names it in literal ARNs (a policy's
  // `arn:aws:lambda:us-east-1:…`): deployed elsewhere, those would silently match nothing.
  for (const [key, synthesized, local] of [
    ['region', assembly.region, scope.region],
    ['account', assembly.account, scope.account],
  ] as const) {
    if (synthesized !== undefined && synthesized !== local) {
      throw refuse(
        key === 'account'
          ? `stack ${stackName} was synthesized for account ${synthesized} (the CDK CLI took it from your AWS credentials), which its template names in literal ARNs; the local deployment is account ${local}: let npm run assembly synthesize (it runs cdk synth without your credentials), or synthesize with none (AWS_PROFILE unset, AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null)`
          : `stack ${stackName} was synthesized for ${key} ${synthesized}, which its template names in literal ARNs: deploy it locally with ${key} ${synthesized}, or synthesize for ${local}`,
      );
    }
  }

  const parameters = new Map<string, string>();
  for (const [name, parameter] of Object.entries(template.Parameters ?? {})) {
    const type = String(parameter.Type);
    if (name === 'BootstrapVersion' && String(parameter.Default).startsWith('/cdk-bootstrap/')) {
      ignore(`parameter ${name}`, BOOTSTRAP_WHY);
    } else if (parameter.Default === undefined) {
      throw refuse(
        `Parameters.${name}: a parameter without a default is not supported by the local runtime (nothing supplies its value)`,
      );
    } else if (type !== 'String' && type !== 'Number') {
      throw refuse(
        `Parameters.${name}: a parameter of type ${type} is not supported by the local runtime (String and Number only)`,
      );
    } else {
      parameters.set(name, String(parameter.Default));
    }
  }
  for (const name of Object.keys(template.Rules ?? {})) {
    if (name !== 'CheckBootstrapVersion')
      throw refuse(`Rules.${name}: rules are not supported by the local runtime`);
    ignore(`rule ${name}`, BOOTSTRAP_WHY);
  }

  const specs = new Map<string, ResourceTypeSpec>();
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    const where = `Resources.${logicalId} (${resource.Type})`;
    const why = IGNORED_TYPES[resource.Type];
    if (why !== undefined) {
      ignore(`${resource.Type} ${logicalId}`, why);
      continue;
    }
    const spec = RESOURCE_TYPES[resource.Type];
    if (spec === undefined)
      throw refuse(`${where}: type ${resource.Type} is not supported by the local runtime`);
    for (const attribute of Object.keys(resource)) {
      if (!(attribute in RESOURCE_ATTRIBUTES)) {
        throw refuse(`${where}: ${attribute} is not supported by the local runtime`);
      }
      const reason = RESOURCE_ATTRIBUTES[attribute];
      if (reason !== undefined) ignore(`resource attribute ${attribute}`, reason, logicalId);
    }
    for (const property of Object.keys(resource.Properties ?? {})) {
      if (!spec.supported.includes(property) && !(property in spec.notEmulated)) {
        throw refuse(`${where}: property ${property} is not supported by the local runtime`);
      }
    }
    specs.set(logicalId, spec);
  }

  const pseudo: Readonly<Record<string, string>> = {
    'AWS::AccountId': scope.account,
    'AWS::Region': scope.region,
    'AWS::Partition': 'aws',
    'AWS::StackName': stackName,
    'AWS::StackId': `arn:aws:cloudformation:${scope.region}:${scope.account}:stack/${stackName}/${deterministicUuid(stackName, '', salt)}`,
    'AWS::URLSuffix': 'amazonaws.com',
  };
  const resourceOf = (logicalId: string): TemplateResource =>
    template.Resources[logicalId] as TemplateResource;
  const returns = new Map<string, Returns & { name: string }>();
  const computing = new Set<string>();

  /** A resource's name, Ref and attributes: from its name alone, or the few properties they need. */
  const returnsOf = (logicalId: string, path: string): Returns & { name: string } => {
    const known = returns.get(logicalId);
    if (known !== undefined) return known;
    const resource = template.Resources[logicalId];
    if (resource === undefined)
      throw refuse(`${path}: ${logicalId} is no resource or parameter of the template`);
    const spec = specs.get(logicalId);
    if (spec === undefined)
      throw refuse(
        `${path}: ${logicalId} (${resource.Type}) is ignored by the local runtime: nothing to refer to`,
      );
    if (computing.has(logicalId)) throw refuse(`${path}: ${logicalId}'s name depends on itself`);
    computing.add(logicalId);
    const property = (name: string) =>
      resolveValue(resource.Properties?.[name], `Resources.${logicalId}.Properties.${name}`, context);
    const uuid = deterministicUuid(stackName, logicalId, salt);
    const name = spec.naming === 'uuid' ? uuid : nameOf(logicalId, spec.naming, property);
    const { account, region } = scope;
    const queueUrl = (queueName: string) => scope.queueUrl(queueName);
    const functionUrl = (functionName: string) => scope.functionUrl(functionName);
    const given = {
      name,
      uuid,
      account,
      region,
      partition: 'aws',
      property,
      queueUrl,
      functionUrl,
      createdAt,
    };
    const computed = { name, ...spec.returns(given) };
    computing.delete(logicalId);
    returns.set(logicalId, computed);
    return computed;
  };
  const nameOf = (
    logicalId: string,
    rule: Exclude<ResourceTypeSpec['naming'], 'uuid'>,
    property: (name: string) => unknown,
  ): string => {
    const explicit = rule.property === undefined ? undefined : property(rule.property);
    const path = `Resources.${logicalId}.Properties.${rule.property}`;
    if (explicit !== undefined && typeof explicit !== 'string') throw refuse(`${path}: expected a string`);
    if (explicit !== undefined && explicit.length > rule.maxLength) {
      throw refuse(`${path}: ${explicit} is longer than ${rule.maxLength} characters`);
    }
    const fifo = rule.fifo !== undefined && String(property(rule.fifo)) === 'true';
    return explicit ?? generatedName(stackName, logicalId, salt, rule.maxLength, fifo ? '.fifo' : '');
  };
  const context: IntrinsicContext = {
    ref: (name, path) => {
      const value = pseudo[name] ?? parameters.get(name);
      if (value !== undefined) return value;
      if (name.startsWith('AWS::'))
        throw refuse(`${path}: Ref ${name}: pseudo parameter not supported by the local runtime`);
      if (ignored.has(`parameter ${name}`)) throw refuse(`${path}: Ref ${name}: ${BOOTSTRAP_WHY}`);
      const { ref } = returnsOf(name, path);
      if (ref === undefined)
        throw refuse(`${path}: Ref ${name}: ${resourceOf(name).Type} has no Ref value locally`);
      return ref;
    },
    getAtt: (logicalId, attribute, path) => {
      const value = returnsOf(logicalId, path).attributes[attribute];
      if (value !== undefined) return value;
      const known = Object.keys(returnsOf(logicalId, path).attributes).join(', ');
      throw refuse(
        `${path}: Fn::GetAtt ${logicalId}.${attribute}: ${resourceOf(logicalId).Type} provides no attribute ${attribute} locally (it provides ${known})`,
      );
    },
  };

  const resources = new Map<string, ResolvedResource>();
  for (const [logicalId, spec] of specs) {
    const resource = resourceOf(logicalId);
    const path = `Resources.${logicalId}.Properties`;
    const properties = resolveValue(resource.Properties ?? {}, path, context) as Record<string, unknown>;
    spec.check?.(properties, path);
    for (const [property, why] of Object.entries(spec.notEmulated)) {
      if (has(properties, property)) ignore(`${resource.Type} ${property}`, why, logicalId);
    }
    const { name, ref, attributes } = returnsOf(logicalId, path);
    resources.set(logicalId, {
      logicalId,
      type: resource.Type,
      name,
      physicalId: ref ?? name,
      attributes,
      properties,
    });
  }

  const outputs: Record<string, string> = {};
  for (const [key, output] of Object.entries(template.Outputs ?? {})) {
    for (const field of Object.keys(output)) {
      if (field === 'Export')
        ignore('output Export', "exports serve other stacks' Fn::ImportValue: one stack runs here", key);
      else if (field !== 'Value' && field !== 'Description')
        throw refuse(`Outputs.${key}: ${field} is not supported by the local runtime`);
    }
    const value = resolveValue(output.Value, `Outputs.${key}.Value`, context);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw refuse(`Outputs.${key}.Value: resolves to ${JSON.stringify(value)}, not a string`);
    }
    outputs[key] = String(value);
  }

  return {
    stackName,
    stackArn: pseudo['AWS::StackId'] as string,
    resources,
    byType: (type) => [...resources.values()].filter((resource) => resource.type === type),
    outputs,
    creationOrder: creationOrder([...specs.keys()], template.Resources),
    // A few resources by name; many (every resource's Metadata) by count, or the list drowns the rest.
    ignored: [...ignored].map(([what, { why, who }]) => ({
      what:
        who.length === 0 ? what : `${what} (${who.length > 3 ? `${who.length} resources` : who.join(', ')})`,
      why,
    })),
  };
}

/** Whether a dotted property path (`Code.S3Bucket`) is set. */
function has(properties: Readonly<Record<string, unknown>>, path: string): boolean {
  let value: unknown = properties;
  for (const key of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
  return value !== undefined;
}

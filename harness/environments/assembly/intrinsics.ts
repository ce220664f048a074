/**
 * The CloudFormation intrinsic functions the local runtime resolves, and a refusal for every other.
 *
 * Why not a library: cfn-resolver-lib 1.1.8 (ISC) resolves with values the caller supplies, but an
 * intrinsic it cannot resolve (Fn::If, Fn::ImportValue, a Ref it has no value for) stays in the
 * output as it was, silently. A function would then start with `{"Fn::ImportValue": …}` as an
 * environment variable. The set a CDK stack emits is small and bounded (Ref, Fn::GetAtt, Fn::Join,
 * Fn::Sub; Fn::Select and Fn::Split come with some constructs), so we resolve those ourselves and
 * refuse, in one line naming the intrinsic and where it is, everything else: refusal over silence.
 *
 * Reference: https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/intrinsic-function-reference.html
 */

/** A template this runtime will not run: one line naming what and where. */
export class UnsupportedTemplateError extends Error {
  override readonly name = 'UnsupportedTemplateError';
}

export const SUPPORTED_INTRINSICS = ['Ref', 'Fn::GetAtt', 'Fn::Join', 'Fn::Sub', 'Fn::Select', 'Fn::Split'];

/** What a template's names resolve to; the stack resolver provides it. */
export interface IntrinsicContext {
  /** `Ref` of a pseudo parameter (AWS::…), a parameter or a resource. */
  ref(name: string, path: string): string;
  /** `Fn::GetAtt` of a resource's attribute. */
  getAtt(logicalId: string, attribute: string, path: string): string;
}

/** The pseudo parameter that removes the property (or list element) it is the value of. */
export const NO_VALUE = 'AWS::NoValue';

/**
 * `value` with every intrinsic resolved; `undefined` where it was `Ref: AWS::NoValue` (an object
 * drops that key, a list that element). `path` names where `value` is, for the refusals.
 */
export function resolveValue(value: unknown, path: string, context: IntrinsicContext): unknown {
  if (Array.isArray(value)) {
    return value
      .map((item, index) => resolveValue(item, `${path}[${index}]`, context))
      .filter((item) => item !== undefined);
  }
  if (value === null || typeof value !== 'object') return value;
  const intrinsic = intrinsicOf(value);
  if (intrinsic !== undefined) return resolveIntrinsic(intrinsic.name, intrinsic.argument, path, context);
  const resolved: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const out = resolveValue(item, `${path}.${key}`, context);
    if (out !== undefined) resolved[key] = out;
  }
  return resolved;
}

/**
 * The intrinsic an object is, if it is one: a single key that is `Ref`, `Fn::…`, or `Condition`
 * with a string (the condition function; an IAM statement's `Condition` is an object, and data).
 */
export function intrinsicOf(value: object): { name: string; argument: unknown } | undefined {
  const keys = Object.keys(value);
  if (keys.length !== 1) return undefined;
  const name = keys[0] as string;
  const argument = (value as Record<string, unknown>)[name];
  if (name === 'Ref' || name.startsWith('Fn::')) return { name, argument };
  if (name === 'Condition' && typeof argument === 'string') return { name, argument };
  return undefined;
}

/** The refusal of an intrinsic this runtime does not resolve. */
export function unsupportedIntrinsic(name: string, path: string): UnsupportedTemplateError {
  return new UnsupportedTemplateError(
    `${path}: ${name} is not supported by the local runtime (supported: ${SUPPORTED_INTRINSICS.join(', ')})`,
  );
}

function resolveIntrinsic(name: string, argument: unknown, path: string, context: IntrinsicContext): unknown {
  switch (name) {
    case 'Ref':
      if (typeof argument !== 'string') throw malformed(name, path, 'a name');
      return argument === NO_VALUE ? undefined : context.ref(argument, path);
    case 'Fn::GetAtt': {
      const [logicalId, attribute] = getAttArguments(argument, path, context);
      return context.getAtt(logicalId, attribute, path);
    }
    case 'Fn::Join': {
      if (!Array.isArray(argument) || argument.length !== 2 || typeof argument[0] !== 'string') {
        throw malformed(name, path, '[delimiter, [values]]');
      }
      const items = resolveList(argument[1], `${path}.Fn::Join[1]`, context);
      return items.map((item, index) => asString(item, `${path}.Fn::Join[1][${index}]`)).join(argument[0]);
    }
    case 'Fn::Sub':
      return substitute(argument, path, context);
    case 'Fn::Select': {
      if (!Array.isArray(argument) || argument.length !== 2) throw malformed(name, path, '[index, [values]]');
      const index = Number(resolveValue(argument[0], `${path}.Fn::Select[0]`, context));
      const items = resolveList(argument[1], `${path}.Fn::Select[1]`, context);
      if (!Number.isInteger(index) || index < 0 || index >= items.length) {
        throw new UnsupportedTemplateError(`${path}: Fn::Select index ${argument[0]} is outside its list`);
      }
      return items[index];
    }
    case 'Fn::Split': {
      if (!Array.isArray(argument) || argument.length !== 2 || typeof argument[0] !== 'string') {
        throw malformed(name, path, '[delimiter, string]');
      }
      const source = asString(resolveValue(argument[1], `${path}.Fn::Split[1]`, context), path);
      return source.split(argument[0]);
    }
    default:
      throw unsupportedIntrinsic(name, path);
  }
}

/** `Fn::GetAtt`'s `[logicalId, attribute]` or `'logicalId.attribute'` (split at the first dot). */
function getAttArguments(argument: unknown, path: string, context: IntrinsicContext): [string, string] {
  if (typeof argument === 'string') {
    const dot = argument.indexOf('.');
    if (dot > 0) return [argument.slice(0, dot), argument.slice(dot + 1)];
  } else if (Array.isArray(argument) && argument.length === 2 && typeof argument[0] === 'string') {
    // The attribute name may itself be a Ref (to a parameter), as CloudFormation allows.
    const attribute = resolveValue(argument[1], `${path}.Fn::GetAtt[1]`, context);
    if (typeof attribute === 'string') return [argument[0], attribute];
  }
  throw malformed('Fn::GetAtt', path, "[logicalId, attribute] or 'logicalId.attribute'");
}

/** A list argument: a literal list (its items resolved) or an intrinsic that yields one. */
function resolveList(value: unknown, path: string, context: IntrinsicContext): unknown[] {
  const resolved = resolveValue(value, path, context);
  if (!Array.isArray(resolved)) throw new UnsupportedTemplateError(`${path}: expected a list`);
  return resolved;
}

/**
 * `Fn::Sub`: `${Name}` is a variable of the map, a pseudo parameter, a parameter or a resource's
 * Ref; `${Logical.Attr}` a GetAtt; `${!Literal}` stays `${Literal}`.
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/intrinsic-function-reference-sub.html
 */
function substitute(argument: unknown, path: string, context: IntrinsicContext): string {
  let template: unknown = argument;
  const variables: Record<string, string> = {};
  if (Array.isArray(argument)) {
    if (argument.length !== 2 || argument[1] === null || typeof argument[1] !== 'object') {
      throw malformed('Fn::Sub', path, 'a string or [string, {variables}]');
    }
    template = argument[0];
    for (const [key, value] of Object.entries(argument[1] as Record<string, unknown>)) {
      variables[key] = asString(resolveValue(value, `${path}.Fn::Sub[1].${key}`, context), path);
    }
  }
  if (typeof template !== 'string') throw malformed('Fn::Sub', path, 'a string or [string, {variables}]');
  return template.replace(/\$\{([^}]*)\}/g, (_match, inner: string) => {
    if (inner.startsWith('!')) return `\${${inner.slice(1)}}`;
    const name = inner.trim();
    const variable = variables[name];
    if (variable !== undefined) return variable;
    const dot = name.indexOf('.');
    if (dot > 0 && !name.startsWith('AWS::'))
      return context.getAtt(name.slice(0, dot), name.slice(dot + 1), path);
    if (name === NO_VALUE)
      throw new UnsupportedTemplateError(`${path}: Fn::Sub cannot substitute ${NO_VALUE}`);
    return context.ref(name, path);
  });
}

/**
 * The logical ids and parameters a value refers to (Ref, Fn::GetAtt, Fn::Sub's `${…}`): what it
 * needs resolved first. Pseudo parameters are left out.
 */
export function referencesOf(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) referencesOf(item, into);
    return into;
  }
  if (value === null || typeof value !== 'object') return into;
  const intrinsic = intrinsicOf(value);
  const name = intrinsic?.name;
  const argument = intrinsic?.argument;
  if (name === 'Ref' && typeof argument === 'string' && !argument.startsWith('AWS::')) into.add(argument);
  if (name === 'Fn::GetAtt') {
    const target =
      typeof argument === 'string' ? argument.split('.')[0] : Array.isArray(argument) && argument[0];
    if (typeof target === 'string') into.add(target);
  }
  if (name === 'Fn::Sub') {
    const template = Array.isArray(argument) ? argument[0] : argument;
    const variables = Array.isArray(argument) ? Object.keys(argument[1] ?? {}) : [];
    for (const [, inner] of String(template).matchAll(/\$\{([^!}][^}]*)\}/g)) {
      const target = (inner as string).trim().split('.')[0] as string;
      if (!target.startsWith('AWS::') && !variables.includes(target)) into.add(target);
    }
  }
  for (const item of Object.values(value)) referencesOf(item, into);
  return into;
}

/**
 * The logical ids in an order CloudFormation could create them: each after the resources its
 * properties refer to and its DependsOn (ids outside `logicalIds`, the ignored ones, left out).
 */
export function creationOrder(
  logicalIds: readonly string[],
  resources: Readonly<Record<string, { readonly Properties?: unknown; readonly DependsOn?: unknown }>>,
): string[] {
  const wanted = new Set(logicalIds);
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (logicalId: string, from: string) => {
    if (state.get(logicalId) === 'done') return;
    if (state.get(logicalId) === 'visiting') {
      throw new UnsupportedTemplateError(`Resources.${from}: a circular dependency through ${logicalId}`);
    }
    state.set(logicalId, 'visiting');
    const resource = resources[logicalId];
    const dependsOn = resource?.DependsOn === undefined ? [] : [resource.DependsOn].flat().map(String);
    for (const next of [...referencesOf(resource?.Properties ?? {}), ...dependsOn]) {
      if (wanted.has(next)) visit(next, logicalId);
    }
    state.set(logicalId, 'done');
    order.push(logicalId);
  };
  for (const logicalId of logicalIds) visit(logicalId, logicalId);
  return order;
}

function asString(value: unknown, path: string): string {
  if (typeof value === 'string') return value;
  throw new UnsupportedTemplateError(
    `${path}: expected a string, the template gives ${JSON.stringify(value)}`,
  );
}

function malformed(name: string, path: string, shape: string): UnsupportedTemplateError {
  return new UnsupportedTemplateError(`${path}: ${name} takes ${shape}`);
}

/**
 * The event filters of a local DynamoDB stream mapping (FilterCriteria.Filters[].Pattern): the
 * patterns' check at construction, which refuses what is not implemented, and the matching of a
 * record against one pattern. Used by harness/environments/assembly/stream-mapping.ts.
 *
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html and
 * https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html — filters are ORed, a record
 * must contain every field a filter names, a record no filter matches is not sent and the iterator
 * advances past it. "For filter rules, Lambda supports the same set of syntax and rules as Amazon
 * EventBridge." Only exact values are implemented.
 */

type FilterValue = string | number | boolean | null;
export interface FilterPattern {
  readonly [field: string]: FilterPattern | readonly FilterValue[];
}

/**
 * A filter pattern, checked as far as this mapping implements it: objects of fields, each an
 * object (a nested field) or an array of exact values. Any operator ({"prefix": …},
 * {"anything-but": …}, {"numeric": …}, {"exists": …}…) is refused in one line that names it.
 */
export function compileFilterPattern(pattern: string): FilterPattern {
  const refuse = (why: string): never => {
    throw new RangeError(`filter pattern ${pattern}: ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(pattern);
  } catch {
    return refuse('is not JSON (Lambda refuses it at CreateEventSourceMapping)');
  }
  const check = (node: unknown, path: string): FilterPattern => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      return refuse(`${path || 'the pattern'} must be an object of fields`);
    }
    for (const [field, rule] of Object.entries(node)) {
      const at = path ? `${path}.${field}` : field;
      if (Array.isArray(rule)) {
        if (rule.length === 0) refuse(`${at} has an empty array, which matches nothing`);
        for (const value of rule as unknown[]) {
          if (typeof value === 'object' && value !== null) {
            const operator = Object.keys(value)[0] ?? '{}';
            refuse(
              `${at} uses the "${operator}" operator, which the local stream mapping does not implement (only exact values)`,
            );
          }
        }
      } else if (typeof rule === 'object' && rule !== null) {
        check(rule, at);
      } else {
        refuse(`${at} must be an array of values or an object of fields, got ${JSON.stringify(rule)}`);
      }
    }
    return node as FilterPattern;
  };
  return check(parsed, '');
}

/**
 * EventBridge's matching of exact values: the record must hold every field the pattern names
 * ("the event must contain all the field names included in a filter"), and a field's value (or
 * one element, if it is an array) must equal one of the listed values, character for character.
 */
export function matchesFilter(pattern: FilterPattern, value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const fields = value as Record<string, unknown>;
  for (const [field, rule] of Object.entries(pattern)) {
    if (!Object.hasOwn(fields, field) || fields[field] === undefined) return false;
    const actual = fields[field];
    if (isValueList(rule)) {
      const candidates = Array.isArray(actual) ? actual : [actual];
      if (!candidates.some((candidate) => rule.some((allowed) => allowed === candidate))) return false;
    } else if (!matchesFilter(rule, actual)) {
      return false;
    }
  }
  return true;
}

/** The mapping's filters, ORed: no filter lets every record through. */
export function passesFilters(filters: readonly FilterPattern[], record: unknown): boolean {
  return filters.length === 0 || filters.some((filter) => matchesFilter(filter, record));
}

function isValueList(rule: FilterPattern | readonly FilterValue[]): rule is readonly FilterValue[] {
  return Array.isArray(rule);
}

import type { Change, FinalState, Invariant, Verdict } from './scenario.js';

/**
 * How many times each event was applied, counted from what the final state shows. Each counter
 * says where it reads: an attribute the team's write stamps, or the table's change stream.
 */
export type Applications = (final: FinalState) => ReadonlyMap<string, number>;

/**
 * Counts, over every item of `table`, the event ids in the list attribute `attribute`: the write
 * appends the event's id (`SET #applied = list_append(if_not_exists(#applied, :empty), :id)`), a
 * list, not a set, so a second application shows as a second entry.
 */
export function appliedFromList(table: string, attribute: string): Applications {
  return (final) => {
    const counts = new Map<string, number>();
    for (const item of tableItems(final, table)) {
      const value = item[attribute];
      if (value === undefined) continue;
      if (!Array.isArray(value)) {
        throw new TypeError(
          `${table}.${attribute} is not a list on ${JSON.stringify(keyOf(item, attribute))}: the write must append each event's id`,
        );
      }
      for (const id of value) counts.set(String(id), (counts.get(String(id)) ?? 0) + 1);
    }
    return counts;
  };
}

/**
 * Counts, in `table`'s change stream (its definition needs a StreamSpecification with new images),
 * the writes whose new image carries the event's id in `attribute`: every insert or modify the
 * write stamps with `SET #lastEvent = :id`. A write the stream shows is a write applied, even one
 * overwritten since.
 */
export function appliedFromStream(table: string, attribute: string): Applications {
  return (final) => {
    const changes = (final.changes as Record<string, readonly Change[] | undefined>)[table];
    if (changes === undefined) {
      throw new TypeError(
        `${table} has no stream: give its definition StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' }`,
      );
    }
    const counts = new Map<string, number>();
    for (const change of changes) {
      const id = change.newImage?.[attribute];
      if (change.type === 'REMOVE' || id === undefined) continue;
      // A modify that changed nothing is no application (the same id stamped on an unchanged item).
      if (change.type === 'MODIFY' && JSON.stringify(change.oldImage) === JSON.stringify(change.newImage))
        continue;
      counts.set(String(id), (counts.get(String(id)) ?? 0) + 1);
    }
    return counts;
  };
}

/**
 * Each event applied exactly once: none applied twice, none unapplied (an event in the DLQ is a
 * violation too: it was not applied). `except`: events expected to be refused (never applied).
 */
export function eachAppliedOnce(
  applications: Applications,
  options: { readonly except?: readonly string[] } = {},
): Invariant {
  const atMostOnce = appliedAtMostOnce(applications, options);
  const applied = noneLost(applications, { ...options, deadLettersAreLost: true });
  return async (final) => [...violationsOf(await atMostOnce(final)), ...violationsOf(await applied(final))];
}

/** No event applied more than once (what an at-most-once consumer promises). */
export function appliedAtMostOnce(
  applications: Applications,
  options: { readonly except?: readonly string[] } = {},
): Invariant {
  return (final) => {
    const counts = applications(final);
    const refused = new Set(options.except ?? []);
    return uniqueIds(final)
      .filter((id) => (counts.get(id) ?? 0) > (refused.has(id) ? 0 : 1))
      .map((id) => `${id} applied ${times(counts.get(id) ?? 0)}`);
  };
}

/** No event lost: each applied at least once, or kept in the DLQ (unless `deadLettersAreLost`). */
export function noneLost(
  applications: Applications,
  options: { readonly except?: readonly string[]; readonly deadLettersAreLost?: boolean } = {},
): Invariant {
  return (final) => {
    const counts = applications(final);
    const refused = new Set(options.except ?? []);
    const kept = new Set(final.deadLetters.map((letter) => letter.eventId));
    return uniqueIds(final)
      .filter((id) => !refused.has(id) && (counts.get(id) ?? 0) === 0)
      .filter((id) => options.deadLettersAreLost || !kept.has(id))
      .map((id) =>
        kept.has(id) ? `${id} never applied (in the DLQ)` : `${id} lost: never applied, not in the DLQ`,
      );
  };
}

/**
 * The sum of `attribute` over `table`'s items (those `where` selects) equals `expected`: a number,
 * or one computed from the events (say the stock a scenario's order lines leave).
 */
export function sumEquals(options: {
  readonly table: string;
  readonly attribute: string;
  readonly expected: number | ((final: FinalState) => number);
  readonly where?: (item: Record<string, unknown>) => boolean;
}): Invariant {
  return (final) => {
    // Items without the attribute (the core's markers, in the same table) are not summed.
    const items = tableItems(final, options.table)
      .filter((item) => item[options.attribute] !== undefined)
      .filter(options.where ?? (() => true));
    const sum = items.reduce((total, item) => total + numberOf(item, options.attribute), 0);
    const expected = typeof options.expected === 'function' ? options.expected(final) : options.expected;
    return sum === expected
      ? []
      : [`${options.table}.${options.attribute} sums to ${sum}, expected ${expected}`];
  };
}

/**
 * No item of `table` ever had `attribute` below `minimum`: every new image in its change stream,
 * and the final items (stock never below zero).
 */
export function neverBelow(table: string, attribute: string, minimum = 0): Invariant {
  return (final) => {
    const images = [
      ...(final.changes[table] ?? []).flatMap((change) => (change.newImage ? [change.newImage] : [])),
      ...tableItems(final, table),
    ];
    const below = images.filter(
      (image) => image[attribute] !== undefined && numberOf(image, attribute) < minimum,
    );
    return below.length === 0
      ? []
      : [
          `${table}.${attribute} went below ${minimum}: ${[...new Set(below.map((image) => `${JSON.stringify(keyOf(image))} at ${image[attribute]}`))].slice(0, 3).join(', ')}`,
        ];
  };
}

/** Several invariants as one: every violation of each. */
export function allOf(...invariants: readonly Invariant[]): Invariant {
  return async (final) => {
    const violations: string[] = [];
    for (const invariant of invariants) violations.push(...violationsOf(await invariant(final)));
    return violations;
  };
}

export function violationsOf(verdict: Verdict): readonly string[] {
  return Array.isArray(verdict)
    ? (verdict as readonly string[])
    : (verdict as { violations: readonly string[] }).violations;
}

function times(count: number): string {
  return count === 1 ? 'once' : `${count} times`;
}

function tableItems(final: FinalState, table: string): readonly Record<string, unknown>[] {
  const items = final.tables[table];
  if (items === undefined)
    throw new TypeError(
      `no table ${table} in the scenario (${Object.keys(final.tables).join(', ') || 'none'})`,
    );
  return items;
}

function uniqueIds(final: FinalState): string[] {
  return [...new Set(final.events.map((event) => event.id))];
}

function numberOf(item: Record<string, unknown>, attribute: string): number {
  const value = item[attribute];
  if (typeof value !== 'number')
    throw new TypeError(
      `${attribute} is not a number on ${JSON.stringify(keyOf(item, attribute))}: ${JSON.stringify(value)}`,
    );
  return value;
}

/** An item's string attributes but the one in question, short: enough to name it in a violation. */
function keyOf(item: Record<string, unknown>, except?: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(item)
      .filter(([name, value]) => typeof value === 'string' && name !== except)
      .slice(0, 2),
  );
}

import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A command as the document client sends it (tell them apart with instanceof: bundles rename classes). */
export interface SentCommand {
  readonly input: unknown;
}

export interface ClientHooks {
  /** May return a replacement command (the same operation, evidence added); undefined sends it as is. */
  readonly before?: (command: SentCommand) => SentCommand | undefined;
  /** After the answer (`error` unset) or the failure, before the core sees either. */
  readonly after?: (command: SentCommand, error?: unknown) => Promise<void>;
}

const coreSends = new AsyncLocalStorage<true>();

/**
 * Runs `send` as a request of the consumer's own (a core's, or the work a team gives it), so the
 * explorer (harness/studies/explore/) can tell it from the lab's counters and evidence records, which are
 * not steps of the consumer: every send through {@link instrumentClient} is one.
 */
export function asCoreSend<T>(send: () => Promise<T>): Promise<T> {
  return coreSends.run(true, send);
}

/** Whether the request being made now was sent by the consumer itself ({@link asCoreSend}). */
export function isCoreSend(): boolean {
  return coreSends.getStore() === true;
}

/**
 * The lab's seam into a core: the client the core is given, with hooks around each send. The
 * core's code is untouched; what it sends reaches the same client (its middleware, its retries,
 * a test's aws-sdk-client-mock), so faults and evidence come from outside.
 */
export function instrumentClient(base: DynamoDBDocumentClient, hooks: ClientHooks): DynamoDBDocumentClient {
  const instrumented = Object.create(base) as DynamoDBDocumentClient;
  const send = async (command: SentCommand, ...rest: unknown[]): Promise<unknown> => {
    const sent = hooks.before?.(command) ?? command;
    let answer: unknown;
    try {
      answer = await asCoreSend(() =>
        (base.send as (command: unknown, ...rest: unknown[]) => Promise<unknown>).call(base, sent, ...rest),
      );
    } catch (error) {
      await hooks.after?.(sent, error);
      throw error;
    }
    await hooks.after?.(sent);
    return answer;
  };
  Object.defineProperty(instrumented, 'send', { value: send });
  return instrumented;
}

/**
 * An Update with more to write: counters joined to its `ADD` clause, attributes to its `SET`
 * clause (each made if missing). Its operation, key and condition stay as they are. `set` values
 * are expressions over their own placeholders (`:name`): `list_append(...)` fits as well as a value.
 */
export function withMoreAttributes<
  U extends {
    readonly UpdateExpression?: string | undefined;
    readonly ExpressionAttributeNames?: Record<string, string> | undefined;
    readonly ExpressionAttributeValues?: Record<string, unknown> | undefined;
  },
>(
  update: U,
  more: {
    readonly add?: Record<string, number>;
    readonly set?: Record<string, unknown>;
    /** `name` → an expression of `#name` (the attribute itself) and `:v…` placeholders in `values`. */
    readonly setExpressions?: Record<
      string,
      { readonly expression: string; readonly values: Record<string, unknown> }
    >;
  },
): U {
  const clauses = clausesOf(update.UpdateExpression ?? '');
  const names: Record<string, string> = { ...update.ExpressionAttributeNames };
  const values: Record<string, unknown> = { ...update.ExpressionAttributeValues };
  let next = 0;
  /** `#labN` for the name and `:labN` for its value, paired, so either names the other. */
  const pair = (name: string, raw?: unknown): [string, string] => {
    next += 1;
    names[`#lab${next}`] = name;
    if (raw !== undefined) values[`:lab${next}`] = raw;
    return [`#lab${next}`, `:lab${next}`];
  };
  for (const [name, amount] of Object.entries(more.add ?? {})) {
    clauses.ADD.push(pair(name, amount).join(' '));
  }
  for (const [name, raw] of Object.entries(more.set ?? {})) {
    // DynamoDB refuses an undefined value: nothing to add.
    if (raw !== undefined) clauses.SET.push(pair(name, raw).join(' = '));
  }
  for (const [name, { expression, values: own }] of Object.entries(more.setExpressions ?? {})) {
    const [attribute, prefix] = pair(name);
    let text = expression.replaceAll('#name', attribute);
    for (const [alias, raw] of Object.entries(own)) {
      const aliased = `${prefix}_${alias.slice(1)}`;
      values[aliased] = raw;
      text = text.replaceAll(alias, aliased);
    }
    clauses.SET.push(`${attribute} = ${text}`);
  }
  const expression = (['SET', 'ADD', 'REMOVE', 'DELETE'] as const)
    .filter((clause) => clauses[clause].length > 0)
    .map((clause) => `${clause} ${clauses[clause].join(', ')}`)
    .join(' ');
  return {
    ...update,
    UpdateExpression: expression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * An update expression's actions by clause. Clause keywords are split at the top level only, and
 * an attribute named like a keyword must be a placeholder (`#add`), as DynamoDB requires.
 */
function clausesOf(expression: string): Record<'SET' | 'ADD' | 'REMOVE' | 'DELETE', string[]> {
  const clauses = {
    SET: [] as string[],
    ADD: [] as string[],
    REMOVE: [] as string[],
    DELETE: [] as string[],
  };
  // A keyword only where a clause can start: not inside a placeholder (`#set`, `:add`) or a name.
  const parts = expression.split(/(?<![#:\w])(SET|ADD|REMOVE|DELETE)\s+/i);
  if ((parts[0] ?? '').trim() !== '') throw new Error(`not an update expression: "${expression}"`);
  for (let index = 1; index < parts.length; index += 2) {
    const clause = (parts[index] ?? '').toUpperCase() as keyof typeof clauses;
    clauses[clause].push(...splitTopLevel(parts[index + 1] ?? ''));
  }
  return clauses;
}

/** Splits on commas outside parentheses: `list_append(a, b), c` is two actions. */
function splitTopLevel(actions: string): string[] {
  const result: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of actions) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (char === ',' && depth === 0) {
      result.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim() !== '') result.push(current.trim());
  return result;
}
